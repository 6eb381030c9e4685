import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeHead, encodeHead, type Head } from "../src/head.js";

/**
 * cbor-x decodes leniently; a head is accepted only in its one encoding (SPEC §14.3).
 * Most cases below are heads cbor-x itself decodes without complaint.
 */
const DIGEST = "ab".repeat(32);
const entry = encodeHead({ kind: "entry", digest: DIGEST });
const tombstone = encodeHead({ kind: "tombstone", digest: DIGEST, redactedAt: "2025-06-01T12:00:00.000Z", reason: "why", size: 300 });
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const bytes = (h: string): Buffer => Buffer.from(h.replace(/\s+/g, ""), "hex");

describe("frame heads (SPEC §14.3)", () => {
  it("an entry head is [1, h'digest'] in 36 bytes, a tombstone head five items", () => {
    expect(hex(entry)).toBe(`82015820${DIGEST}`);
    expect(entry.length).toBe(36);
    expect(hex(tombstone)).toBe(`85025820${DIGEST}78183230 32352d30 362d3031 5431323a 30303a30 302e3030 305a6377 6879 19012c`.replace(/\s+/g, ""));
  });

  it("round-trips every head the store writes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 200 }),
        fc.nat({ max: 2 ** 30 }),
        fc.date({ min: new Date(0), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (digest, reason, size, when) => {
          const heads: Head[] = [
            { kind: "entry", digest: hex(digest) },
            { kind: "tombstone", digest: hex(digest), redactedAt: when.toISOString(), reason, size },
          ];
          for (const head of heads) expect(decodeHead(encodeHead(head))).toEqual({ ok: true, head });
        },
      ),
    );
  });

  const refused: [string, Buffer][] = [
    ["a non-shortest kind (0x18 0x01)", bytes(`8218015820${DIGEST}`)],
    ["an indefinite-length array", bytes(`9f015820${DIGEST}ff`)],
    ["a byte string tagged 64 (cbor-x's default for Uint8Array)", bytes(`8201d8405820${DIGEST}`)],
    ["a digest of 31 bytes", bytes(`8201581f${DIGEST.slice(2)}`)],
    ["a non-shortest byte string length", bytes(`820159002${"0"}${DIGEST}`)],
    ["a map instead of an array", bytes(`a2016161025820${DIGEST}`)],
    ["an extra item", bytes(`83015820${DIGEST}00`)],
    ["a trailing byte", bytes(`82015820${DIGEST}00`)],
    ["kind 3", bytes(`82035820${DIGEST}`)],
    ["a reason that is not UTF-8 (cbor-x would replace it silently)", bytes(hex(tombstone).replace("63776879", "63ff6879"))],
    ["a time that is not RFC 3339 UTC", encodeHeadUnchecked([2, Buffer.from(DIGEST, "hex"), "2025-06-01 12:00:00", "why", 1])],
    ["an empty reason", encodeHeadUnchecked([2, Buffer.from(DIGEST, "hex"), "2025-06-01T12:00:00Z", "", 1])],
    ["a negative size", encodeHeadUnchecked([2, Buffer.from(DIGEST, "hex"), "2025-06-01T12:00:00Z", "why", -1])],
    ["a float size", encodeHeadUnchecked([2, Buffer.from(DIGEST, "hex"), "2025-06-01T12:00:00Z", "why", 1.5])],
  ];
  for (const [name, head] of refused) {
    it(`[M14.5] refuses ${name}`, () => {
      expect(decodeHead(head).ok).toBe(false);
    });
  }
});

function encodeHeadUnchecked(value: unknown[]): Buffer {
  // Built by hand where encodeHead's types would not allow it.
  return Buffer.from(cborOf(value));
}

function cborOf(value: unknown): Uint8Array {
  const out: number[] = [];
  const head = (major: number, n: number): void => {
    if (n < 24) out.push((major << 5) | n);
    else if (n < 256) out.push((major << 5) | 24, n);
    else out.push((major << 5) | 25, n >> 8, n & 0xff);
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      head(4, v.length);
      v.forEach(walk);
    } else if (v instanceof Uint8Array) {
      head(2, v.length);
      out.push(...v);
    } else if (typeof v === "string") {
      const b = Buffer.from(v, "utf8");
      head(3, b.length);
      out.push(...b);
    } else if (typeof v === "number" && Number.isInteger(v)) {
      if (v >= 0) head(0, v);
      else head(1, -1 - v);
    } else if (typeof v === "number") {
      const b = Buffer.alloc(9);
      b[0] = 0xfb;
      b.writeDoubleBE(v, 1);
      out.push(...b);
    }
  };
  walk(value);
  return Uint8Array.from(out);
}
