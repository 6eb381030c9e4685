import { Point, hashes } from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";

/**
 * An independent statement of SPEC §8.5 (ed25519-dalek `verify_strict`) on noble's curve
 * arithmetic, slow and literal, used to check the production path, which is OpenSSL plus
 * pre-checks. It shares no code with `src/ed25519.ts`.
 */
hashes.sha512 = sha512;

const L = Point.CURVE().n;

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] ?? 0);
  return n;
}

export type OracleResult =
  "valid" | "step1_s_not_canonical" | "step2_r_not_a_point" | "step2_r_small_order" | "step3_a_not_a_point" | "step3_a_small_order" | "step4_equation";

export function dalekStrict(message: Uint8Array, publicKey: Uint8Array, signature: Uint8Array): OracleResult {
  const r = signature.slice(0, 32);
  const s = littleEndian(signature.slice(32));
  if (s >= L) return "step1_s_not_canonical";
  let rPoint: Point;
  try {
    rPoint = Point.fromBytes(r, true);
  } catch {
    return "step2_r_not_a_point";
  }
  if (rPoint.isSmallOrder()) return "step2_r_small_order";
  let a: Point;
  try {
    a = Point.fromBytes(publicKey, true);
  } catch {
    return "step3_a_not_a_point";
  }
  if (a.isSmallOrder()) return "step3_a_small_order";
  const k = littleEndian(sha512(new Uint8Array([...r, ...publicKey, ...message]))) % L;
  const sB = s === 0n ? Point.ZERO : Point.BASE.multiply(s);
  const kA = k === 0n ? Point.ZERO : a.multiply(k);
  const expected = sB.add(kA.negate()).toBytes();
  return Buffer.from(expected).equals(Buffer.from(r)) ? "valid" : "step4_equation";
}
