/**
 * A strict JSON reader for one Line (SPEC §1.1, §3.2).
 *
 * `JSON.parse` cannot be used on a Line: it reads `1.0`, `1e0` and `-0` as integers and
 * rounds integers above 2^53, and the value space (SPEC §3.2) is defined on what the
 * text says, not on what a double holds. This reader keeps every number outside the
 * value space as an {@link OutOfSpaceNumber} carrying its lexeme, so the canonical form
 * can refuse it with a path. It accepts exactly RFC 8259 JSON, like the reference's
 * reader (serde_json): no trailing commas, no unpaired surrogate escapes, at most 127
 * levels of nesting, duplicate keys resolved last-wins. Error texts follow serde_json's
 * wording so that a `malformed_line` detail reads the same in both implementations.
 */

import { JsonSyntaxError, OutOfSpaceNumber, type JsonArray, type JsonObject, type JsonValue, type OutOfSpaceKind } from "./json-value.js";

export { JsonSyntaxError, OutOfSpaceNumber, type JsonArray, type JsonObject, type JsonValue, type OutOfSpaceKind } from "./json-value.js";

const MAX_DEPTH = 127;
const U64_MAX = 18446744073709551615n;
const UTF8 = new TextEncoder();
const MAX_SAFE = 9007199254740991;

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof OutOfSpaceNumber);
}

/** Parse one row. Throws {@link JsonSyntaxError}; never any other error for any input. */
export function parseJson(text: string): JsonValue {
  return new Reader(text).document();
}

/** A parsed row, and whether its text already is its canonical form (SPEC §3.1). */
export interface ParsedRow {
  readonly value: JsonValue;
  /**
   * True when the text is exactly the canonical form of `value`: no whitespace, keys in
   * strictly ascending UTF-16 order, minimal escapes, only values inside the value space.
   * Every Line an emitter writes is; a verifier can then hash the bytes as they are.
   */
  readonly canonical: boolean;
  /** Where the top-level `signature` member sits in the text: [start, end) of `"signature":…`. */
  readonly signature?: { readonly start: number; readonly end: number; readonly first: boolean; readonly last: boolean };
}

export function parseRow(text: string): ParsedRow {
  const reader = new Reader(text);
  const value = reader.document();
  return { value, canonical: reader.canonical, ...(reader.signature === undefined ? {} : { signature: reader.signature }) };
}

class Reader {
  private i = 0;
  canonical = true;
  signature: ParsedRow["signature"];
  constructor(private readonly s: string) {}

  document(): JsonValue {
    const value = this.value(MAX_DEPTH + 1, true);
    this.ws();
    if (this.i < this.s.length) this.fail("trailing characters", this.i + 1);
    return value;
  }

  private column(index: number): number {
    return UTF8.encode(this.s.slice(0, index)).length;
  }

  /** `at` is a UTF-16 index; reported as a UTF-8 byte column. */
  private fail(reason: string, at: number): never {
    const index = Math.min(at, this.s.length);
    throw new JsonSyntaxError(reason, this.column(index));
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    if (i !== this.i) this.canonical = false;
    this.i = i;
  }

  private value(depth: number, top = false): JsonValue {
    this.ws();
    const s = this.s;
    if (this.i >= s.length) this.fail("EOF while parsing a value", s.length);
    const c = s.charCodeAt(this.i);
    switch (c) {
      case 0x7b /* { */:
        return this.object(depth - 1, top);
      case 0x5b /* [ */:
        return this.array(depth - 1);
      case 0x22 /* " */:
        this.i++;
        return this.string();
      case 0x74 /* t */:
        return this.ident("true", true);
      case 0x66 /* f */:
        return this.ident("false", false);
      case 0x6e /* n */:
        this.canonical = false; // null is outside the value space
        return this.ident("null", null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        return this.fail("expected value", this.i + 1);
    }
  }

  private ident<T extends boolean | null>(word: string, result: T): T {
    const s = this.s;
    for (let k = 0; k < word.length; k++) {
      if (this.i >= s.length) this.fail("EOF while parsing a value", s.length);
      if (s.charCodeAt(this.i) !== word.charCodeAt(k)) this.fail("expected ident", this.i + 1);
      this.i++;
    }
    return result;
  }

  private number(): number | OutOfSpaceNumber {
    const s = this.s;
    const start = this.i;
    const negative = s.charCodeAt(this.i) === 0x2d;
    if (negative) this.i++;
    const first = s.charCodeAt(this.i);
    if (first === 0x30) {
      this.i++;
      if (isDigit(s.charCodeAt(this.i))) this.fail("invalid number", this.i + 1);
    } else if (first >= 0x31 && first <= 0x39) {
      while (isDigit(s.charCodeAt(this.i))) this.i++;
    } else {
      if (this.i >= s.length) this.fail("EOF while parsing a value", s.length);
      this.fail("invalid number", this.i + 1);
    }
    let fractional = false;
    if (s.charCodeAt(this.i) === 0x2e /* . */) {
      fractional = true;
      this.i++;
      if (!isDigit(s.charCodeAt(this.i))) {
        if (this.i >= s.length) this.fail("EOF while parsing a value", s.length);
        this.fail("invalid number", this.i + 1);
      }
      while (isDigit(s.charCodeAt(this.i))) this.i++;
    }
    const e = s.charCodeAt(this.i);
    if (e === 0x65 || e === 0x45) {
      fractional = true;
      this.i++;
      const sign = s.charCodeAt(this.i);
      if (sign === 0x2b || sign === 0x2d) this.i++;
      if (!isDigit(s.charCodeAt(this.i))) {
        if (this.i >= s.length) this.fail("EOF while parsing a value", s.length);
        this.fail("invalid number", this.i + 1);
      }
      while (isDigit(s.charCodeAt(this.i))) this.i++;
    }
    const lexeme = s.slice(start, this.i);
    if (fractional || negative) {
      // serde_json refuses a float it cannot represent rather than reading infinity.
      if (!Number.isFinite(Number(lexeme))) this.fail("number out of range", this.i);
      // An integer lexeme that is negative is a negative integer unless it is -0 or
      // below i64::MIN, which serde_json reads as a float.
      this.canonical = false;
      const kind: OutOfSpaceKind = !fractional && negative && lexeme !== "-0" && BigInt(lexeme) >= -(2n ** 63n) ? "negative" : "float";
      return new OutOfSpaceNumber(lexeme, kind);
    }
    if (lexeme.length <= 15) return Number(lexeme);
    const big = BigInt(lexeme);
    if (big > U64_MAX) {
      if (!Number.isFinite(Number(lexeme))) this.fail("number out of range", this.i);
      this.canonical = false;
      return new OutOfSpaceNumber(lexeme, "float");
    }
    if (big > BigInt(MAX_SAFE)) {
      this.canonical = false;
      return new OutOfSpaceNumber(lexeme, "too_large");
    }
    return Number(lexeme);
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    // Fast path: no escapes.
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.i = i + 1;
        return s.slice(start, i);
      }
      if (c === 0x5c || c < 0x20) break;
    }
    let out = "";
    let run = start;
    for (;;) {
      if (this.i >= s.length) this.fail("EOF while parsing a string", s.length);
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(run, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) {
        this.fail("control character (\\u0000-\\u001F) found while parsing a string", this.i + 1);
      }
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += s.slice(run, this.i);
      this.i++;
      if (this.i >= s.length) this.fail("EOF while parsing a string", s.length);
      const e = s.charCodeAt(this.i++);
      switch (e) {
        case 0x22:
          out += '"';
          break;
        case 0x5c:
          out += "\\";
          break;
        case 0x2f:
          out += "/";
          this.canonical = false;
          break;
        case 0x62:
          out += "\b";
          break;
        case 0x66:
          out += "\f";
          break;
        case 0x6e:
          out += "\n";
          break;
        case 0x72:
          out += "\r";
          break;
        case 0x74:
          out += "\t";
          break;
        case 0x75: {
          const start = this.i;
          const decoded = this.unicodeEscape();
          // JCS writes \u00xx (lowercase) only for controls without a short form.
          const code = decoded.charCodeAt(0);
          const shortForm = code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
          if (decoded.length !== 1 || code >= 0x20 || shortForm || s.slice(start, start + 4) !== code.toString(16).padStart(4, "0")) this.canonical = false;
          out += decoded;
          break;
        }
        default:
          this.fail("invalid escape", this.i);
      }
      run = this.i;
    }
  }

  private hex4(): number {
    const s = this.s;
    if (this.i + 4 > s.length) this.fail("EOF while parsing a string", s.length);
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const c = s.charCodeAt(this.i++);
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
      if (d < 0) this.fail("invalid escape", this.i);
      n = n * 16 + d;
    }
    return n;
  }

  private unicodeEscape(): string {
    const n = this.hex4();
    if (n >= 0xdc00 && n <= 0xdfff) this.fail("lone leading surrogate in hex escape", this.i);
    if (n < 0xd800 || n > 0xdbff) return String.fromCharCode(n);
    const s = this.s;
    if (this.i >= s.length) this.fail("EOF while parsing a string", s.length);
    if (s.charCodeAt(this.i) !== 0x5c) this.fail("unexpected end of hex escape", this.i + 1);
    this.i++;
    if (this.i >= s.length) this.fail("EOF while parsing a string", s.length);
    if (s.charCodeAt(this.i) !== 0x75) this.fail("unexpected end of hex escape", this.i + 1);
    this.i++;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) this.fail("lone leading surrogate in hex escape", this.i);
    return String.fromCharCode(n, low);
  }

  private array(depth: number): JsonArray {
    if (depth === 0) this.fail("recursion limit exceeded", this.i + 1);
    this.i++;
    const out: JsonValue[] = [];
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      if (this.i >= this.s.length) this.fail("EOF while parsing a list", this.s.length);
      const c = this.s.charCodeAt(this.i);
      if (c === 0x5d) {
        this.i++;
        return out;
      }
      if (c !== 0x2c) this.fail("expected `,` or `]`", this.i + 1);
      this.i++;
      this.ws();
      if (this.s.charCodeAt(this.i) === 0x5d) this.fail("trailing comma", this.i + 1);
    }
  }

  // Stryker disable next-line BooleanLiteral: equivalent E8
  private object(depth: number, top = false): JsonObject {
    if (depth === 0) this.fail("recursion limit exceeded", this.i + 1);
    this.i++;
    let previous: string | undefined;
    // No prototype chain to Object: `__proto__` and `constructor` are keys like any other.
    const out = new Members() as Record<string, JsonValue>;
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return out;
    }
    for (;;) {
      if (this.i >= this.s.length) this.fail("EOF while parsing an object", this.s.length);
      if (this.s.charCodeAt(this.i) !== 0x22) this.fail("key must be a string", this.i + 1);
      const memberStart = this.i;
      this.i++;
      const key = this.string();
      // Canonical members are in strictly ascending UTF-16 order: no repeats (SPEC §3.1).
      if (previous !== undefined && !(previous < key)) this.canonical = false;
      const first = previous === undefined;
      previous = key;
      this.ws();
      if (this.i >= this.s.length) this.fail("EOF while parsing an object", this.s.length);
      if (this.s.charCodeAt(this.i) !== 0x3a) this.fail("expected `:`", this.i + 1);
      this.i++;
      out[key] = this.value(depth);
      const memberEnd = this.i;
      this.ws();
      if (this.i >= this.s.length) this.fail("EOF while parsing an object", this.s.length);
      const c = this.s.charCodeAt(this.i);
      if (top && key === "signature") this.signature = { start: memberStart, end: memberEnd, first, last: c === 0x7d };
      if (c === 0x7d) {
        this.i++;
        return out;
      }
      if (c !== 0x2c) this.fail("expected `,` or `}`", this.i + 1);
      this.i++;
      this.ws();
      if (this.s.charCodeAt(this.i) === 0x7d) this.fail("trailing comma", this.i + 1);
    }
  }
}

/**
 * A parsed object's members. Its prototype inherits nothing, as `Object.create(null)`
 * would, but objects made by a constructor keep V8's fast property layout: a verifier reads
 * a million of them (Object.create(null) objects start in dictionary mode).
 */
class Members {}
Object.setPrototypeOf(Members.prototype, null);
Reflect.deleteProperty(Members.prototype, "constructor");

/** The prototype of every object the reader makes: plain JSON to the canonical form. */
export const PARSED_OBJECT_PROTOTYPE: object = Members.prototype;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
