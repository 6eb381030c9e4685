import { Point } from "@noble/ed25519";
import { equationHolds, publicKeyHandle, type PublicKeyHandle } from "./ed25519-backend.js";
import { fromCheckedHex, toHex } from "../wire/hex.js";

/**
 * Ed25519 under the strict rule of SPEC §8.5, which is ed25519-dalek's `verify_strict`
 * (the Rust reference's rule). See adr/0001 for why the arithmetic is Node's (OpenSSL)
 * and what is checked here first so that the answer is dalek's, not OpenSSL's; in a
 * browser bundle the arithmetic is noble's instead (`ed25519-backend-noble.ts`, adr/0015).
 *
 * A signature (R, S) over message M under public key A verifies when, in this order:
 * 1. S, read little-endian, is below the group order L;
 * 2. R decodes to a curve point and that point is not of small order;
 * 3. A decodes to a curve point and that point is not of small order;
 * 4. the encoding of [S]B - [k]A equals the 32 bytes of R, where
 *    k = SHA-512(R || A || M) mod L, with R and A exactly as given (cofactorless).
 * Decoding reads y modulo p and accepts x = 0 with the sign bit set, as dalek does;
 * a non-canonical R still fails step 4, because the encoding computed there is canonical.
 */

/** The group order L, little-endian, most significant byte last. */
const L_LE = fromCheckedHex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");

/**
 * Every 32-byte string that decodes to a point of order 1, 2, 4 or 8: the eight torsion
 * points' canonical encodings, plus the non-canonical spellings (y + p, and a set sign bit
 * when x = 0). A test rebuilds this list from the curve with noble and compares.
 */
export const SMALL_ORDER_ENCODINGS: ReadonlySet<string> = new Set([
  "0100000000000000000000000000000000000000000000000000000000000000",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  "0000000000000000000000000000000000000000000000000000000000000080",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
  "0000000000000000000000000000000000000000000000000000000000000000",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
  "0100000000000000000000000000000000000000000000000000000000000080",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
]);

function scalarIsCanonical(s: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) {
    const a = s[i] ?? 0;
    const b = L_LE[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

/** A public key that has passed decoding: usable for strict verification. */
export interface VerifyingKey {
  /** The key's 32 bytes (RFC 8032 encoding), copied from those it was decoded from. */
  readonly bytes: Uint8Array;
  /** The same bytes as 64 lowercase hex, the spelling of an `open` Line's `public_key`. */
  readonly hex: string;
  /** @internal the back end's decoded key (OpenSSL's key object under Node). */
  readonly handle: PublicKeyHandle;
}

/** Why a 32-byte public key cannot verify anything (dalek refuses it at construction). */
export type PublicKeyFault = "not_a_point" | "small_order";

/**
 * Decode a public key for verification. Decoding costs a square root, so a verifier
 * does this once per Session, not once per Line.
 */
export function verifyingKey(publicKey: Uint8Array): VerifyingKey | PublicKeyFault {
  if (publicKey.length !== 32) return "not_a_point";
  const hex = toHex(publicKey);
  try {
    // zip215 = true decodes as dalek does (y mod p, x = 0 with either sign bit).
    Point.fromBytes(publicKey, true);
  } catch {
    return "not_a_point";
  }
  if (SMALL_ORDER_ENCODINGS.has(hex)) return "small_order";
  return { bytes: Uint8Array.from(publicKey), hex, handle: publicKeyHandle(publicKey) };
}

/**
 * Strict verification (SPEC §8.5) of the 64 raw signature bytes.
 *
 * Steps 1 and 2 are checked here (`passesPrechecks`); the back end then performs step 4,
 * which also refuses an R that does not decode, because no canonical encoding of
 * [S]B - [k]A can equal it.
 */
export function verifyStrict(key: VerifyingKey, message: Uint8Array, signature: Uint8Array): boolean {
  return passesPrechecks(signature) && equationHolds(key.handle, message, signature);
}

/**
 * Steps 1 and 2 of SPEC §8.5: a 64-byte signature whose S is below L and whose R is not a
 * small-order encoding. What any back end's step 4 is given has passed these.
 */
export function passesPrechecks(signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  if (!scalarIsCanonical(signature.subarray(32))) return false;
  // Every small-order encoding has one of four second bytes: any other R needs no lookup.
  const second = signature[1];
  if (second === 0x00 || second === 0x17 || second === 0xe8 || second === 0xff) {
    if (SMALL_ORDER_ENCODINGS.has(toHex(signature.subarray(0, 32)))) return false;
  }
  return true;
}
