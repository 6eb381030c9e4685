import { createHash, hash, timingSafeEqual } from "node:crypto";

/** SHA-256 as 64 lowercase hex: what every Envelope digest is (SPEC §9). */
export function sha256Hex(bytes: Uint8Array): string {
  return hash("sha256", bytes, "hex");
}

/** SHA-256 over several parts, as raw bytes. */
export function sha256Of(...parts: readonly Uint8Array[]): Buffer {
  const h = createHash("sha256");
  for (const part of parts) h.update(part);
  return h.digest();
}

/** Equality of two 64-hex digests, in constant time (style: digests are compared so). */
export function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, "latin1");
  const y = Buffer.from(b, "latin1");
  return x.length === y.length && timingSafeEqual(x, y);
}
