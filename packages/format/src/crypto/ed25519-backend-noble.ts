import { Point, etc } from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";

/**
 * The curve arithmetic of SPEC §8.5 step 4 in plain JavaScript, for browsers (adr/0015): the
 * cofactorless equation of ed25519-dalek's `verify_strict`, made from noble's point
 * operations (noble's own `verify` is cofactored, so it is not called). The checks before
 * step 4 are shared with the Node back end (`ed25519.ts`).
 */
export const ED25519_BACKEND = "@noble/ed25519";

/** A decoded public key: the point, and the bytes exactly as given (k hashes those). */
export interface PublicKeyHandle {
  readonly point: Point;
  readonly bytes: Uint8Array;
}

const L = Point.CURVE().n;

/** The point `publicKey` decodes to, as dalek decodes it (y modulo p, either sign of x = 0). */
export function publicKeyHandle(publicKey: Uint8Array): PublicKeyHandle {
  return { point: Point.fromBytes(publicKey, true), bytes: Uint8Array.from(publicKey) };
}

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] ?? 0);
  return n;
}

/** Step 4: the encoding of [S]B - [k]A equals R, k = SHA-512(R || A || M) mod L; S is already below L. */
export function equationHolds(key: PublicKeyHandle, message: Uint8Array, signature: Uint8Array): boolean {
  const r = signature.subarray(0, 32);
  const s = littleEndian(signature.subarray(32, 64));
  const k = etc.mod(littleEndian(sha512(etc.concatBytes(r, key.bytes, message))), L);
  const encoded = Point.BASE.multiply(s, false).subtract(key.point.multiply(k, false)).toBytes();
  for (let i = 0; i < 32; i++) if (encoded[i] !== r[i]) return false;
  return true;
}
