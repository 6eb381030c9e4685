import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonSyntaxError, parseJson, readRow } from "../src/internal.js";
import { LineHash, OutOfSpaceNumber } from "../src/index.js";

/**
 * The reader accepts exactly what the reference's reader (serde_json) accepts, because a
 * row one implementation reads and the other refuses gets two verdicts.
 */
/** The message of the JsonSyntaxError the reader throws on `text`. */
function refusal(text: string): string {
  try {
    parseJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error.message;
    throw error;
  }
  throw new Error(`read without error: ${text}`);
}

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

  it("numbers cut short or misspelt: serde_json's message, at serde_json's column", () => {
    // serde_json reports EOF at the end of the text, a peeked byte at its own column, and a
    // consumed byte one column before the next.
    const cases: [string, string][] = [
      ["1.", "EOF while parsing a value at line 1 column 2"],
      ["[1.]", "invalid number at line 1 column 4"],
      ["1e", "EOF while parsing a value at line 1 column 2"],
      ["1e+", "EOF while parsing a value at line 1 column 3"],
      ["1ex", "invalid number at line 1 column 3"],
      ["[1E-]", "invalid number at line 1 column 5"],
      ["-", "EOF while parsing a value at line 1 column 1"],
      ["-x", "invalid number at line 1 column 2"],
      ["[-]", "invalid number at line 1 column 3"],
      ["01", "invalid number at line 1 column 2"],
      ["-01", "invalid number at line 1 column 3"],
      ["[1e400]", "number out of range at line 1 column 6"],
      [`[1${"0".repeat(400)}]`, "number out of range at line 1 column 402"],
      ["[1,]", "trailing comma at line 1 column 4"],
      ["[1 2]", "expected `,` or `]` at line 1 column 4"],
      ['{"a" 1}', "expected `:` at line 1 column 6"],
      ['{"a":1 "b":2}', "expected `,` or `}` at line 1 column 8"],
      ["{1:2}", "key must be a string at line 1 column 2"],
      ['{"a":1', "EOF while parsing an object at line 1 column 6"],
      ['{"a"', "EOF while parsing an object at line 1 column 4"],
      ["{", "EOF while parsing an object at line 1 column 1"],
      ["[1", "EOF while parsing a list at line 1 column 2"],
      ["tru", "EOF while parsing a value at line 1 column 3"],
      ["nul", "EOF while parsing a value at line 1 column 3"],
      ["fals", "EOF while parsing a value at line 1 column 4"],
      ["trUe", "expected ident at line 1 column 3"],
      ["x", "expected value at line 1 column 1"],
      ["[1] x", "trailing characters at line 1 column 5"],
    ];
    for (const [text, message] of cases) expect(refusal(text), text).toBe(message);
  });

  it("escapes and strings cut short or misspelt: serde_json's message", () => {
    const cases: [string, string][] = [
      ['"\\', "EOF while parsing a string at line 1 column 2"],
      ['"\\u12', "EOF while parsing a string at line 1 column 5"],
      ['"\\u12g4"', "invalid escape at line 1 column 6"],
      ['"\\uD800"', "unexpected end of hex escape at line 1 column 8"],
      ['"\\uD800', "EOF while parsing a string at line 1 column 7"],
      ['"\\uD800\\', "EOF while parsing a string at line 1 column 8"],
      ['"\\uD800\\n"', "unexpected end of hex escape at line 1 column 9"],
      ['"\\uD800\\u0041"', "lone leading surrogate in hex escape at line 1 column 13"],
      ['"\\uDC00"', "lone leading surrogate in hex escape at line 1 column 7"],
      ['"\\q"', "invalid escape at line 1 column 3"],
      ['"a\u0001"', "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3"],
      ['"\\n\u001f"', "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 4"],
    ];
    for (const [text, message] of cases) expect(refusal(text), text).toBe(message);
  });

  it("reads every spelling of a number the grammar allows, judged by how it is written", () => {
    expect(parseJson("[0, 7, 123456789012345, 1234567890123456, 9007199254740991]")).toEqual([0, 7, 123456789012345, 1234567890123456, 9007199254740991]);
    expect(parseJson("[1e+5, 1E-5, 1e5, 0.5, -1.5, -1e2, -0.0]")).toEqual(
      ["1e+5", "1E-5", "1e5", "0.5", "-1.5", "-1e2", "-0.0"].map((lexeme) => new OutOfSpaceNumber(lexeme, "float")),
    );
    expect(parseJson("[9007199254740992, 18446744073709551615, 18446744073709551616]")).toEqual([
      new OutOfSpaceNumber("9007199254740992", "too_large"),
      new OutOfSpaceNumber("18446744073709551615", "too_large"),
      new OutOfSpaceNumber("18446744073709551616", "float"),
    ]);
    expect(parseJson("[-9223372036854775808, -9223372036854775809, -7]")).toEqual([
      new OutOfSpaceNumber("-9223372036854775808", "negative"),
      new OutOfSpaceNumber("-9223372036854775809", "float"),
      new OutOfSpaceNumber("-7", "negative"),
    ]);
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

describe("[M3.3] the reader's edges: nesting, escapes, and what a hash is taken over", () => {
  it("128 levels of arrays or objects: serde_json's recursion limit, at the bracket that passes it", () => {
    expect(refusal(`${"[".repeat(128)}${"]".repeat(128)}`)).toBe("recursion limit exceeded at line 1 column 128");
    expect(refusal(`${'{"a":'.repeat(128)}1${"}".repeat(128)}`)).toBe("recursion limit exceeded at line 1 column 636");
    expect(refusal(`[${'{"a":'.repeat(127)}1${"}".repeat(127)}]`)).toBe("recursion limit exceeded at line 1 column 632");
    expect(parseJson(`${'{"a":'.repeat(127)}1${"}".repeat(127)}`)).toBeTypeOf("object");
  });

  it("a value that does not begin like one: expected value, not a number misspelt; a sign with no digit: invalid number", () => {
    expect(refusal("+1")).toBe("expected value at line 1 column 1");
    expect(refusal("[/]")).toBe("expected value at line 1 column 2");
    expect(refusal("-,")).toBe("invalid number at line 1 column 2");
    expect(refusal("[-/]")).toBe("invalid number at line 1 column 3");
  });

  it("decodes every short escape and hex in either case", () => {
    expect(parseJson('"\\"\\\\\\/\\b\\f\\n\\r\\t"')).toBe('"\\/\b\f\n\r\t');
    expect(parseJson('"\\u00A9\\u00a9\\u00FF\\u00ff\\u0Fe0"')).toBe("\u00a9\u00a9\u00ff\u00ff\u0fe0");
    expect(refusal('"\\u00:0"')).toBe("invalid escape at line 1 column 6");
    expect(refusal('"\\u00G0"')).toBe("invalid escape at line 1 column 6");
  });

  it("surrogate escapes: a pair at either end of the range decodes; a lone low half or a bad second half is refused", () => {
    expect(parseJson('"\\udbff\\udfff\\ud800\\udc00"')).toBe("\u{10ffff}\u{10000}");
    expect(refusal('"\\udfff"')).toBe("lone leading surrogate in hex escape at line 1 column 7");
    expect(refusal('"\\ud800\\ue000"')).toBe("lone leading surrogate in hex escape at line 1 column 13");
    expect(refusal('"\\udbff\\udbff"')).toBe("lone leading surrogate in hex escape at line 1 column 13");
  });

  it("a reader's error is a JsonSyntaxError by name, as a stack trace shows it", () => {
    expect(() => parseJson("x")).toThrow(expect.objectContaining({ name: "JsonSyntaxError" }));
  });

  it("an object read has no members it did not write, constructor included", () => {
    const value = parseJson("{}") as Record<string, unknown>;
    expect(value["constructor"]).toBeUndefined();
    expect("constructor" in value).toBe(false);
  });

  /** ADR 0003: a row is hashed as its canonical form, however it spells it. */
  function hashOf(row: string): LineHash | string {
    const read = readRow(Buffer.from(row));
    return read.ok ? read.lineHash : read.detail;
  }

  it("a string escaped otherwise than JCS writes it hashes as JCS writes it (SPEC §3.1)", () => {
    // JCS: \b \t \n \f \r in their short forms, other controls as lowercase \u00xx, the rest as themselves.
    const cases: [string, string][] = [
      ['{"a":"\\u0008"}', '{"a":"\\b"}'],
      ['{"a":"\\u0009"}', '{"a":"\\t"}'],
      ['{"a":"\\u000a"}', '{"a":"\\n"}'],
      ['{"a":"\\u000c"}', '{"a":"\\f"}'],
      ['{"a":"\\u000d"}', '{"a":"\\r"}'],
      ['{"a":"\\u001F"}', '{"a":"\\u001f"}'],
      ['{"a":"\\u0020"}', '{"a":" "}'],
      ['{"a":"\\u00e9"}', '{"a":"\u00e9"}'],
      ['{"a":"\\ud83d\\ude02"}', '{"a":"\u{1f602}"}'],
      ['{"a":"\\/"}', '{"a":"/"}'],
      ['{"a":1,"a":1}', '{"a":1}'],
    ];
    for (const [row, canonical] of cases) {
      expect(hashOf(row), row).toBe(LineHash.of(canonical));
      expect(hashOf(row), row).not.toBe(LineHash.of(row));
    }
    // Already canonical: hashed as written.
    for (const row of ['{"a":"\\u0001"}', '{"a":"\\u001f"}', '{"a":"\\b\\t\\n\\f\\r"}']) expect(hashOf(row), row).toBe(LineHash.of(row));
  });

  it("the signing input is the row without its top-level signature member, wherever it stands (SPEC §4)", () => {
    const input = (row: string): string => {
      const read = readRow(Buffer.from(row));
      if (!read.ok) throw new Error(read.detail);
      const cut = read.signingCut;
      // The same bytes, whether taken from the text or cut out of the row.
      if (cut !== undefined)
        expect(Buffer.concat([Buffer.from(row).subarray(0, cut.start), Buffer.from(row).subarray(cut.end)]).toString()).toBe(read.signingInput());
      return read.signingInput();
    };
    expect(input('{"signature":"ab"}')).toBe("{}");
    expect(input('{"signature":"ab","z":1}')).toBe('{"z":1}');
    expect(input('{"a":1,"signature":"ab"}')).toBe('{"a":1}');
    expect(input('{"a":1,"signature":"ab","z":1}')).toBe('{"a":1,"z":1}');
    expect(input('{"a":{"signature":"n"},"signature":"ab","z":{"signature":"m"}}')).toBe('{"a":{"signature":"n"},"z":{"signature":"m"}}');
    expect(input('{"signature":"ab","z":[{"signature":"m"}]}')).toBe('{"z":[{"signature":"m"}]}');
  });
});
