import fc from "fast-check";
import { OutOfSpaceNumber, type JsonValue } from "@aegis/format";
import { parseJson } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import { readFrame } from "../src/strict-frame.js";
import type { Json } from "../src/message.js";

/**
 * The relay's frame reader and the Chain's row reader are two readers by design (ADR 0040):
 * the Chain's resolves a duplicate key last-wins and keeps a number outside its value space
 * as its lexeme; the relay's refuses both kinds of frame. On everything else they must read
 * the same text as the same value, or refuse it alike.
 */
const utf8 = new TextEncoder();

/** The Chain's value as the relay reads it: a number kept as its lexeme is the double it names. */
function asRelayValue(value: JsonValue): Json {
  if (value instanceof OutOfSpaceNumber) return Number(value.lexeme);
  if (Array.isArray(value)) return value.map(asRelayValue);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asRelayValue(v)]));
  return value;
}

function chainRead(text: string): { ok: true; value: Json } | { ok: false } {
  try {
    return { ok: true, value: asRelayValue(parseJson(text)) };
  } catch {
    return { ok: false };
  }
}

describe("the relay's frame reader and the Chain's row reader", () => {
  it("read every JSON text of distinct keys as the same value, or refuse it alike (fast-check)", () => {
    // Any UTF-16 code unit in strings, lone surrogates included (JSON.stringify escapes those).
    fc.assert(
      fc.property(fc.json({ depthSize: "small", stringUnit: fc.nat(0xffff).map((unit) => String.fromCharCode(unit)) }), (text) => {
        const frame = readFrame(utf8.encode(text));
        const chain = chainRead(text);
        if (frame.ok) {
          expect(chain).toEqual({ ok: true, value: frame.value });
          return;
        }
        // The relay refuses beyond the Chain only for what ADR 0040 lists; else both refuse.
        if (frame.unreadable.code !== "number_out_of_range") expect(chain.ok, frame.unreadable.code).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it("refuse the same broken texts", () => {
    const broken = ["", "{", "[1,]", '{"a":1,}', "01", "1.", ".5", "+1", "NaN", "Infinity", "'a'", '"\\x"', '"\\ud800"', '"a\u0001"', "[1] 2", "tru", "nul"];
    for (const text of broken) {
      expect(readFrame(utf8.encode(text)).ok, text).toBe(false);
      expect(chainRead(text).ok, text).toBe(false);
    }
  });

  it("part only where ADR 0040 says: a duplicate key, a number no double holds exactly", () => {
    expect(readFrame(utf8.encode('{"a":1,"a":2}'))).toMatchObject({ ok: false, unreadable: { code: "duplicate_key" } });
    expect(chainRead('{"a":1,"a":2}')).toEqual({ ok: true, value: { a: 2 } });
    expect(readFrame(utf8.encode("9007199254740993"))).toMatchObject({ ok: false, unreadable: { code: "number_out_of_range" } });
    expect(chainRead("9007199254740993").ok).toBe(true);
  });
});
