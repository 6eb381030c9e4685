import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonSyntaxError, parseJson } from "../src/internal.js";
import { OutOfSpaceNumber } from "../src/index.js";

/**
 * The reader accepts exactly what the reference's reader (serde_json) accepts, because a
 * row one implementation reads and the other refuses gets two verdicts.
 */
describe("[M3.3] a strict JSON reader", () => {
  const refused: [string, string][] = [
    ["trailing comma in an object", '{"a":1,}'],
    ["trailing comma in an array", "[1,]"],
    ["a leading zero", "[01]"],
    ["a lone high surrogate escape", '"\\ud800"'],
    ["a lone low surrogate escape", '"\\udc00"'],
    ["a raw control character in a string", '"a\tb"'],
    ["an unknown escape", '"\\x41"'],
    ["a single-quoted string", "{'a':1}"],
    ["trailing characters", "{} {}"],
    ["NaN", "[NaN]"],
    ["a plus sign", "[+1]"],
    ["a bare fraction", "[.5]"],
    ["a number out of range", "[1e400]"],
    ["an unterminated string", '{"a":"b'],
    ["a comment", "{} // no"],
    ["128 levels of nesting", `${"[".repeat(128)}${"]".repeat(128)}`],
    ["a byte order mark", "\ufeff{}"],
  ];
  it.each(refused)("refuses %s", (_, text) => {
    expect(() => parseJson(text)).toThrow(JsonSyntaxError);
  });

  it("accepts 127 levels of nesting", () => {
    expect(() => parseJson(`${"[".repeat(127)}${"]".repeat(127)}`)).not.toThrow();
  });

  it("reports serde_json's wording and a byte column", () => {
    expect(() => parseJson('{"a":"b')).toThrow("EOF while parsing a string at line 1 column 7");
    expect(() => parseJson('{"é":1,}')).toThrow("trailing comma at line 1 column 9");
    expect(() => parseJson("not json")).toThrow("expected ident at line 1 column 2");
    expect(() => parseJson("")).toThrow("EOF while parsing a value at line 1 column 0");
  });

  it("keeps numbers outside the value space as their lexeme", () => {
    expect(parseJson("[1.0, -1, 9007199254740993, -0]")).toEqual([
      new OutOfSpaceNumber("1.0", "float"),
      new OutOfSpaceNumber("-1", "negative"),
      new OutOfSpaceNumber("9007199254740993", "too_large"),
      new OutOfSpaceNumber("-0", "float"),
    ]);
  });

  it("duplicate keys: the last one wins, as in the reference", () => {
    expect(parseJson('{"a":1,"a":2}')).toEqual({ a: 2 });
  });

  it("__proto__ is an ordinary key", () => {
    const value = parseJson('{"__proto__":{"x":1}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["x"]).toBeUndefined();
  });

  it("decodes escapes, including surrogate pairs", () => {
    expect(parseJson('"\\u00e9\\ud83d\\ude02\\/\\n"')).toBe("é😂/\n");
  });

  it("agrees with JSON.parse on every document JSON.stringify writes within the value space", () => {
    // Inside the space: integers 0..2^53-1 only, and well-formed strings (JSON.stringify
    // escapes a lone surrogate, which this reader refuses, as serde_json does).
    const inSpace = (v: unknown): boolean =>
      typeof v === "number"
        ? Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0)
        : typeof v === "string"
          ? v.isWellFormed()
          : Array.isArray(v)
            ? v.every(inSpace)
            : typeof v === "object" && v !== null
              ? Object.entries(v).every(([k, x]) => k.isWellFormed() && inSpace(x))
              : true;
    fc.assert(
      fc.property(fc.jsonValue({ noUnicodeString: false }).filter(inSpace), (value) => {
        const text = JSON.stringify(value);
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("never throws anything but JsonSyntaxError, whatever the input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (text) => {
        try {
          parseJson(text);
        } catch (error) {
          expect(error).toBeInstanceOf(JsonSyntaxError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
