import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize, tryCanonicalize, parseJson } from "../src/internal.js";
import { CanonicalFormError, describeCanonicalFault, type CanonicalFault } from "../src/wire/canonical.js";
import { type JsonValue } from "../src/index.js";
import { parseRow } from "../src/wire/json.js";
import { readVector } from "./support/vectors.js";

describe("RFC 8785 test data (vectors/external/rfc8785)", () => {
  it.each(["french", "unicode", "weird"])("%s canonicalizes to the published output", (name) => {
    const input = readVector(`external/rfc8785/input/${name}.json`).toString("utf8");
    const output = readVector(`external/rfc8785/output/${name}.json`).toString("utf8");
    expect(canonicalize(parseJson(input))).toBe(output);
  });

  it("structures: refused for its float, and canonical once the float is an integer", () => {
    const input = readVector("external/rfc8785/input/structures.json").toString("utf8");
    expect(tryCanonicalize(parseJson(input))).toEqual({ ok: false, fault: { code: "float_not_allowed", path: "$.1.\n" } });
    const output = readVector("external/rfc8785/output/structures.json").toString("utf8");
    expect(canonicalize(parseJson(input.replace("56.0", "56")))).toBe(output);
  });
});

describe("[M3.2] SPEC §3.2: the value space, refused with the path of the offending value", () => {
  const refusals: [string, string, Record<string, unknown>][] = [
    ["a float", '{"a":{"b":[1,2.5]}}', { code: "float_not_allowed", path: "$.a.b[1]" }],
    ["an integral float", '{"wall":1.0}', { code: "float_not_allowed", path: "$.wall" }],
    ["an exponent", '{"wall":1e3}', { code: "float_not_allowed", path: "$.wall" }],
    ["minus zero", '{"seq":-0}', { code: "float_not_allowed", path: "$.seq" }],
    ["a negative integer", '{"seq":-1}', { code: "negative_integer", path: "$.seq" }],
    ["2^53", '{"seq":9007199254740992}', { code: "integer_too_large", path: "$.seq", value: "9007199254740992" }],
    ["beyond u64", '{"seq":18446744073709551616}', { code: "float_not_allowed", path: "$.seq" }],
    ["null", '{"grant_id":null}', { code: "null_not_allowed", path: "$.grant_id" }],
  ];
  it.each(refusals)("%s", (_, text, fault) => {
    expect(tryCanonicalize(parseJson(text))).toEqual({ ok: false, fault });
  });

  it("accepts 2^53 - 1, the largest integer", () => {
    expect(canonicalize(parseJson('{"seq":9007199254740991}'))).toBe('{"seq":9007199254740991}');
  });

  it("refuses values a writer might hand it that JSON cannot carry", () => {
    expect(() => canonicalize({ a: undefined })).toThrow(CanonicalFormError);
    expect(() => canonicalize({ a: 1.5 })).toThrow("floating-point value at $.a is outside the JCS value space");
    expect(() => canonicalize({ a: -3 })).toThrow("negative integer at $.a");
    expect(() => canonicalize({ a: 2 ** 60 })).toThrow("integer 1152921504606846976 at $.a is at or above 2^53");
    expect(() => canonicalize({ a: "\ud800" })).toThrow("lone surrogate");
    expect(() => canonicalize({ a: new Date(0) })).toThrow("non-plain object");
    expect(() => canonicalize({ a: 1n })).toThrow("bigint");
  });

  it("a JavaScript -0 is refused as a float, wherever it stands, never written as 0", () => {
    expect(tryCanonicalize(-0 as JsonValue)).toEqual({ ok: false, fault: { code: "float_not_allowed", path: "$" } });
    expect(() => canonicalize({ a: [1, -0] })).toThrow(new CanonicalFormError({ code: "float_not_allowed", path: "$.a[1]" }));
    expect(() => canonicalize({ seq: -0 })).toThrow("floating-point value at $.seq is outside the JCS value space");
    expect(canonicalize({ seq: 0 })).toBe('{"seq":0}');
  });

  it("a key holding a lone surrogate is refused at the top level and below it, with the path of its object", () => {
    const fault = (value: unknown): unknown => {
      try {
        canonicalize(value);
      } catch (error) {
        if (error instanceof CanonicalFormError) return error.fault;
        throw error;
      }
      return "accepted";
    };
    expect(fault({ "\ud800": 1 })).toEqual({ code: "not_json", path: "$", what: "a key with a lone surrogate" });
    expect(fault({ a: { b: [{ "x\udc00": 1 }] } })).toEqual({ code: "not_json", path: "$.a.b[0]", what: "a key with a lone surrogate" });
    expect(fault({ a: "\udc00" })).toEqual({ code: "not_json", path: "$.a", what: "a string with a lone surrogate" });
    expect(fault({ "\ud83d\ude02": 1 })).toBe("accepted");
    expect(() => canonicalize({ "\ud800": 1 })).toThrow("not serializable as JSON: a key with a lone surrogate at $");
  });

  it("each fault's text is the reference's", () => {
    const texts: [unknown, string][] = [
      [{ a: { b: 1.5 } }, "floating-point value at $.a.b is outside the JCS value space"],
      [{ a: [null] }, "null at $.a[0]; absent fields must be omitted, never null"],
      [{ a: -2 }, "negative integer at $.a is outside the JCS value space"],
      [{ a: 2 ** 53 }, "integer 9007199254740992 at $.a is at or above 2^53 (max 9007199254740991)"],
      [{ a: () => 1 }, "not serializable as JSON: a value of type function at $.a"],
      [{ a: new Map() }, "not serializable as JSON: a non-plain object at $.a"],
      [{ a: undefined }, "not serializable as JSON: a value of type undefined at $.a"],
    ];
    for (const [value, text] of texts) expect(() => canonicalize(value), text).toThrow(text);
    const error = new CanonicalFormError({ code: "null_not_allowed", path: "$" });
    expect(error.name).toBe("CanonicalFormError");
    expect(String(error)).toBe("CanonicalFormError: null at $; absent fields must be omitted, never null");
  });

  it("the first refused value in canonical order is the one named", () => {
    expect(tryCanonicalize(parseJson('{"z":null,"a":1.5}'))).toMatchObject({ fault: { path: "$.a" } });
  });
});

describe("canonical form rules (SPEC §3.1)", () => {
  it("escapes only quote, backslash and controls, lowercase \\u00xx, never /", () => {
    expect(canonicalize({ k: 'q:" b:\\ bs:\b t:\t n:\n f:\f r:\r nul:\u0000 vt:\u000b del:\u007f /:/ é' })).toBe(
      '{"k":"q:\\" b:\\\\ bs:\\b t:\\t n:\\n f:\\f r:\\r nul:\\u0000 vt:\\u000b del:\u007f /:/ é"}',
    );
  });

  it("[M3.1] keys sort by UTF-16 code unit: a supplementary character sorts below U+E000", () => {
    expect(canonicalize({ "\ue000": 1, "\u{10000}": 2 })).toBe('{"\u{10000}":2,"\ue000":1}');
  });

  it("arrays keep their order; empty containers and booleans", () => {
    expect(canonicalize({ p: [3, 1, 2], t: true, f: false, o: {}, a: [] })).toBe('{"a":[],"f":false,"o":{},"p":[3,1,2],"t":true}');
  });
});

/** Arbitrary values inside the value space, with keys and strings from all of Unicode. */
const inSpace = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string({ unit: "grapheme" }),
    fc.string({ unit: "binary" }).filter((s) => s.isWellFormed()),
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.boolean(),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(
      fc.string({ unit: "binary" }).filter((s) => s.isWellFormed() && s !== "__proto__"),
      tie("value"),
      { maxKeys: 4 },
    ),
  ),
})).value;

describe("properties", () => {
  it("canonical text parses back to the same value and is a fixed point", () => {
    fc.assert(
      fc.property(inSpace, (value) => {
        const text = canonicalize(value);
        expect(parseJson(text)).toEqual(value);
        expect(canonicalize(parseJson(text))).toBe(text);
        expect(JSON.parse(text)).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it("whitespace and member order in the source never change the canonical form", () => {
    fc.assert(
      fc.property(inSpace, (value) => {
        const pretty = JSON.stringify(value, null, 2);
        expect(canonicalize(parseJson(pretty))).toBe(canonicalize(value));
      }),
      { numRuns: 200 },
    );
  });
});

/** Write a value as JSON text with random spacing, member order and escapes. */
function anyText(value: JsonValue, r: () => number): string {
  const space = () => (r() < 0.1 ? ([" ", "\n", "\t", "\r"][Math.floor(r() * 4)] ?? "") : "");
  const str = (s: string) =>
    r() < 0.2
      ? `"${[...s].map((ch) => (r() < 0.3 && (ch.codePointAt(0) ?? 0) < 0x10000 ? `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}` : JSON.stringify(ch).slice(1, -1))).join("")}"`
      : JSON.stringify(s);
  if (typeof value === "string") return str(value);
  if (Array.isArray(value)) return `[${value.map((v) => space() + anyText(v, r) + space()).join(",")}]`;
  if (typeof value === "object" && value !== null && !(value instanceof Array)) {
    const keys = Object.keys(value).sort();
    if (r() < 0.3) keys.reverse();
    return `{${keys.map((k) => `${space()}${str(k)}${space()}:${space()}${anyText((value as Record<string, JsonValue>)[k] as JsonValue, r)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("the canonical fast path of the row reader", () => {
  it("flags a row as canonical exactly when it is, and then its signing input is the canonical form without signature", () => {
    fc.assert(
      fc.property(
        inSpace,
        fc.boolean(),
        fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 128, maxLength: 128 }),
        fc.integer(),
        (inner, signed, sig, seed) => {
          let state = seed;
          const r = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
          const line: Record<string, JsonValue> = { line_type: "outcome", seq: 1, payload: inner };
          if (signed) line["signature"] = sig;
          for (const text of [canonicalize(line), anyText(line, r)]) {
            const row = parseRow(text);
            expect(row.canonical, text).toBe(text === canonicalize(row.value));
            if (row.canonical && row.signature !== undefined) {
              const span = row.signature;
              const input = span.first
                ? text.slice(0, span.start) + text.slice(span.last ? span.end : span.end + 1)
                : text.slice(0, span.start - 1) + text.slice(span.end);
              expect(input).toBe(canonicalize(row.value, "signature"));
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("the canonical form of a value that is not an object, and faults that are not the value's", () => {
  it("a top-level value of each kind: written, or refused at $", () => {
    expect(canonicalize("x")).toBe('"x"');
    expect(canonicalize(7)).toBe("7");
    expect(canonicalize(0)).toBe("0");
    expect(canonicalize(9007199254740991)).toBe("9007199254740991");
    expect(canonicalize(true)).toBe("true");
    expect(canonicalize([2, "b", { z: 1, a: [] }])).toBe('[2,"b",{"a":[],"z":1}]');
    expect(() => canonicalize(null)).toThrow(new CanonicalFormError({ code: "null_not_allowed", path: "$" }));
    expect(() => canonicalize(undefined)).toThrow("not serializable as JSON: a value of type undefined at $");
    expect(() => canonicalize(9007199254740992)).toThrow("integer 9007199254740992 at $ is at or above 2^53 (max 9007199254740991)");
  });

  it("an error that is not a canonical-form fault is thrown on, not returned as one", () => {
    const value = {
      get a(): number {
        throw new RangeError("a getter failed");
      },
    };
    expect(() => tryCanonicalize(value as unknown as JsonValue)).toThrow("a getter failed");
  });

  it("a fault code this build does not know gets no other fault's text", () => {
    expect(() => describeCanonicalFault({ code: "a_newer_fault", path: "$" } as unknown as CanonicalFault)).toThrow("unreachable");
  });
});
