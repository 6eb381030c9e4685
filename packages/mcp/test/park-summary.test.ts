import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { listed } from "../src/park-summary.js";

describe("a parked call's arguments, bounded for the list (SPEC §17.5)", () => {
  it("[M17.11] keeps the longest run of whole characters that fits, and the full size", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), fc.integer({ min: 0, max: 900 }), (text, limit) => {
        const bytes = Buffer.byteLength(text);
        const cut = listed(text, limit);
        expect(cut.bytes).toBe(bytes);
        expect(cut.truncated).toBe(bytes > limit);
        expect(text.startsWith(cut.json)).toBe(true);
        expect(cut.json.isWellFormed()).toBe(true);
        expect(Buffer.byteLength(cut.json)).toBeLessThanOrEqual(limit);
        // Maximal: the next character would not have fitted.
        const next = text.slice(cut.json.length).codePointAt(0);
        if (cut.truncated) expect(Buffer.byteLength(cut.json) + Buffer.byteLength(String.fromCodePoint(next ?? 0))).toBeGreaterThan(limit);
      }),
    );
  });

  it("never cuts a two-, three- or four-byte character, at any limit", () => {
    for (const char of ["é", "€", "\u{1F600}"]) {
      const text = char.repeat(10);
      for (let limit = 0; limit <= Buffer.byteLength(text); limit += 1) {
        const cut = listed(text, limit);
        expect(cut.json).toBe(char.repeat(Math.floor(limit / Buffer.byteLength(char))));
      }
    }
  });
});
