import { createPublicKey, verify, type KeyObject } from "node:crypto";

/**
 * The curve arithmetic of SPEC §8.5 step 4 under Node: OpenSSL, about ten times faster than
 * noble here (adr/0001). Browser bundles put `ed25519-backend-noble.ts` in its place (adr/0015);
 * the two must agree on every vector, and the tests hold them to it.
 */
export const ED25519_BACKEND = "node:crypto";

/** A decoded public key as this back end holds it: opaque, and another type in a browser bundle. */
export type PublicKeyHandle = KeyObject;

const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** The key object for 32 bytes that the caller has already decoded as a point (steps 2 and 3 precede this). */
export function publicKeyHandle(publicKey: Uint8Array): PublicKeyHandle {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: "der", type: "spki" });
}

/** Step 4: the encoding of [S]B - [k]A equals R, where S is already known to be canonical. */
export function equationHolds(key: PublicKeyHandle, message: Uint8Array, signature: Uint8Array): boolean {
  return verify(null, message, key, signature);
}
