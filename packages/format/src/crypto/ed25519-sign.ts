import { createPrivateKey, createPublicKey, sign, type KeyObject } from "node:crypto";

/** Signing, which only a writer does: Node's (OpenSSL), never in a browser bundle. */

const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** A 32-byte Ed25519 seed and what derives from it. */
export interface Ed25519Seed {
  readonly publicKey: Uint8Array;
  /** @internal the OpenSSL key object. */
  readonly handle: KeyObject;
}

export function seedKey(seed: Uint8Array): Ed25519Seed {
  if (seed.length !== 32) throw new RangeError(`an Ed25519 seed is 32 bytes, got ${seed.length}`);
  const handle = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const spki = createPublicKey(handle).export({ format: "der", type: "spki" });
  return { publicKey: new Uint8Array(spki.subarray(spki.length - 32)), handle };
}

/** Deterministic Ed25519 (RFC 8032): the same seed and message give the same 64 bytes. */
export function signWith(key: Ed25519Seed, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, key.handle));
}
