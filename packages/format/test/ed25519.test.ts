import { Point } from "@noble/ed25519";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SigningKey } from "../src/index.js";
import { verifyStrict, verifyingKey } from "../src/internal.js";
import { SMALL_ORDER_ENCODINGS } from "../src/crypto/ed25519.js";
import { dalekStrict } from "./support/dalek-oracle.js";
import { hex, readVectorJson } from "./support/vectors.js";

interface SpeccheckCase {
  readonly message: string;
  readonly pub_key: string;
  readonly signature: string;
}
interface SpeccheckExpected {
  readonly results_md_dalek_strict_row: readonly ("V" | "X")[];
  readonly cases: readonly { index: number; valid: boolean; rejected_at: string | null; results_md_column: number | null }[];
}

const cases = readVectorJson<SpeccheckCase[]>("external/ed25519-speccheck/cases.json");
const expected = readVectorJson<SpeccheckExpected>("external/ed25519-speccheck/expected.json");

function production(c: { message: Uint8Array; publicKey: Uint8Array; signature: Uint8Array }): boolean {
  const key = verifyingKey(c.publicKey);
  return typeof key !== "string" && verifyStrict(key, c.message, c.signature);
}

describe("[M8.7] SPEC §8.5 strict Ed25519 on the ed25519-speccheck cases", () => {
  it("has all fifteen cases and an expectation for each", () => {
    expect(cases).toHaveLength(15);
    expect(expected.cases.map((c) => c.index)).toEqual([...cases.keys()]);
  });

  it("the expectations agree with the upstream results.md row for dalek verify_strict", () => {
    for (const c of expected.cases) {
      if (c.results_md_column === null) continue;
      expect(expected.results_md_dalek_strict_row[c.results_md_column], `case ${c.index}`).toBe(c.valid ? "V" : "X");
    }
  });

  it.each(cases.map((c, index) => ({ ...c, index })))("case $index: production path and oracle give the expected verdict", (c) => {
    const want = expected.cases[c.index];
    const input = { message: hex(c.message), publicKey: hex(c.pub_key), signature: hex(c.signature) };
    expect(production(input)).toBe(want?.valid);
    expect(dalekStrict(input.message, input.publicKey, input.signature)).toBe(want?.rejected_at ?? "valid");
  });
});

describe("strict rule edge cases", () => {
  const key = SigningKey.generate();
  const message = new TextEncoder().encode("a line");

  it("accepts an honest signature and refuses it on another message", () => {
    const signature = key.sign(message);
    expect(production({ message, publicKey: key.publicKey, signature })).toBe(true);
    expect(production({ message: new TextEncoder().encode("a lime"), publicKey: key.publicKey, signature })).toBe(false);
  });

  it("refuses the universal signature (R = identity, S = 0) that @noble/ed25519 3.0.0 accepted", () => {
    const universal = hex(`01${"00".repeat(31)}${"00".repeat(32)}`);
    expect(production({ message, publicKey: key.publicKey, signature: universal })).toBe(false);
    expect(dalekStrict(message, key.publicKey, universal)).toBe("step2_r_small_order");
  });

  it("refuses S + L, the malleated twin of a valid signature", () => {
    const signature = key.sign(message);
    const s = Buffer.from(signature.slice(32)).reverse();
    const sPlusL = BigInt(`0x${s.toString("hex")}`) + Point.CURVE().n;
    const bytes = Buffer.from(sPlusL.toString(16).padStart(64, "0"), "hex").reverse();
    const twin = new Uint8Array([...signature.slice(0, 32), ...bytes]);
    expect(dalekStrict(message, key.publicKey, twin)).toBe("step1_s_not_canonical");
    expect(production({ message, publicKey: key.publicKey, signature: twin })).toBe(false);
  });

  it("a public key that is not a curve point cannot verify (dalek refuses to build it)", () => {
    // y = 2 gives x^2 = 3/(4d+1), not a square: no point has this encoding.
    const notAPoint = hex(`02${"00".repeat(31)}`);
    expect(() => Point.fromBytes(notAPoint, true)).toThrow();
    expect(verifyingKey(notAPoint)).toBe("not_a_point");
  });

  it("the production path and the oracle agree on random corruptions of valid signatures", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 64 }), fc.nat(63), fc.integer({ min: 1, max: 255 }), (msg, at, flip) => {
        const signature = key.sign(msg);
        const altered = Uint8Array.from(signature);
        altered[at] = (altered[at] ?? 0) ^ flip;
        for (const sig of [signature, altered]) {
          const oracle = dalekStrict(msg, key.publicKey, sig) === "valid";
          expect(production({ message: msg, publicKey: key.publicKey, signature: sig })).toBe(oracle);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("the small-order table", () => {
  it("is exactly the set of 32-byte strings that decode to a point of order dividing 8", () => {
    // Build the 8-torsion from the curve: a point of order 8 is [L]P for P with a
    // torsion component; collect all multiples and every spelling that decodes to each.
    const L = Point.CURVE().n;
    const p = Point.CURVE().p;
    const torsion = new Map<string, Point>();
    for (let y = 2n; torsion.size < 8; y++) {
      let candidate: Point;
      try {
        const bytes = Buffer.from(y.toString(16).padStart(64, "0"), "hex").reverse();
        const point = Point.fromBytes(Uint8Array.from(bytes), true);
        // [L]P, the torsion component of P (noble refuses a scalar of L itself).
        candidate = point.multiply(L - 1n).add(point);
      } catch {
        continue;
      }
      if (candidate.is0()) continue;
      let q = Point.ZERO;
      for (let i = 0; i < 8; i++) {
        torsion.set(q.toHex(), q);
        q = q.add(candidate);
      }
    }
    const spellings = new Set<string>();
    for (const point of torsion.values()) {
      const canonical = point.toBytes();
      const y = BigInt(`0x${Buffer.from(canonical).reverse().toString("hex")}`) & ((1n << 255n) - 1n);
      const signBit = ((canonical[31] ?? 0) & 0x80) !== 0;
      const ys = y + p < 1n << 255n ? [y, y + p] : [y];
      const signs = point.x === 0n ? [false, true] : [signBit];
      for (const yy of ys) {
        for (const sign of signs) {
          const bytes = Buffer.from(yy.toString(16).padStart(64, "0"), "hex").reverse();
          if (sign) bytes[31] = (bytes[31] ?? 0) | 0x80;
          spellings.add(bytes.toString("hex"));
        }
      }
    }
    expect(torsion.size).toBe(8);
    expect([...SMALL_ORDER_ENCODINGS].sort()).toEqual([...spellings].sort());
    for (const encoding of SMALL_ORDER_ENCODINGS) expect(Point.fromBytes(hex(encoding), true).isSmallOrder()).toBe(true);
  });
});
