import type { Json } from "./message.js";
import { FaultError } from "@aegis/format";

/**
 * The relay's one reading of a frame (SPEC §17.1): a frame is a message only when every
 * reader a server or client may use (Node's `JSON.parse`, Python's `json`, the SDKs' own)
 * reads it as the same value. This reader accepts exactly RFC 8259 JSON in strict UTF-8, and
 * refuses every input on which forgiving readers part ways or on which one of them reads
 * what another refuses:
 *
 * - bytes that are not UTF-8 (one reader substitutes U+FFFD, another raises), and a byte
 *   order mark (Python's `json.loads` refuses a string that starts with one);
 * - an escape naming a lone surrogate (`JSON.parse` keeps it, a UTF-8 encoder cannot);
 * - a key written twice in one object (each reader keeps the last, or the first, or refuses);
 * - nesting deeper than {@link MAX_FRAME_DEPTH} (Python's reader stops near 1,000 levels);
 * - `NaN`, `Infinity` and `-Infinity` (Python reads them; JSON has no such literal);
 * - an integer beyond ±(2^53 − 1) (Python keeps it exact, JavaScript rounds it), and a number
 *   whose magnitude no IEEE double holds (`1e400`);
 * - a `\r` anywhere but as the frame's last byte (a reader that also ends lines at `\r`,
 *   Python's text streams, would read several messages).
 *
 * What it accepts, `JSON.parse` of the same bytes reads as the same value.
 *
 * It is not the Chain's reader (`@aegis/format`, SPEC §3.3), though it scans strings the same
 * way: that one resolves a duplicate key last-wins, as the reference's verifier must, and reads
 * numbers into the Chain's value space; a frame holds floats and negatives, and a duplicate
 * key in it is a refusal, not a choice.
 */

/** Levels of arrays and objects: the Chain's reader's bound (SPEC §3.3), so both read the same frames. */
export const MAX_FRAME_DEPTH = 127;

/** Why a frame is not a message (SPEC §17.1). */
export type Unreadable =
  | { readonly code: "inner_carriage_return" }
  | { readonly code: "not_utf8" }
  | { readonly code: "byte_order_mark" }
  | { readonly code: "not_json"; readonly detail: string }
  | { readonly code: "lone_surrogate" }
  | { readonly code: "duplicate_key"; readonly key: string }
  | { readonly code: "too_deep" }
  | { readonly code: "number_out_of_range"; readonly lexeme: string };

export type FrameReading = { readonly ok: true; readonly value: Json } | { readonly ok: false; readonly unreadable: Unreadable };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Read one frame (its bytes without the `\n`) strictly; see the module's comment for what is refused. */
export function readFrame(frame: Uint8Array): FrameReading {
  const cr = frame.indexOf(0x0d);
  if (cr !== -1 && cr !== frame.length - 1) return refused({ code: "inner_carriage_return" });
  if (frame[0] === 0xef && frame[1] === 0xbb && frame[2] === 0xbf) return refused({ code: "byte_order_mark" });
  let text: string;
  try {
    text = strictUtf8.decode(frame);
  } catch {
    return refused({ code: "not_utf8" });
  }
  try {
    return { ok: true, value: new Reader(text).document() };
  } catch (error) {
    if (error instanceof Refusal) return refused(error.unreadable);
    // A stack overflow cannot happen below the depth bound; anything else is a bug of ours,
    // and a frame a bug stops is still not a message.
    return refused({ code: "not_json", detail: error instanceof Error ? error.message : "unreadable" });
  }
}

function refused(unreadable: Unreadable): FrameReading {
  return { ok: false, unreadable };
}

class Refusal extends FaultError<Unreadable> {
  constructor(readonly unreadable: Unreadable) {
    super("Refusal", unreadable, (f) => f.code);
  }
}

/**
 * An object the reader makes: no prototype to inherit from, so `__proto__` and `constructor`
 * are members like any other, as `JSON.parse` makes them own properties.
 */
class Members {}
Object.setPrototypeOf(Members.prototype, null);
Reflect.deleteProperty(Members.prototype, "constructor");

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

class Reader {
  private i = 0;
  constructor(private readonly s: string) {}

  document(): Json {
    const value = this.value(MAX_FRAME_DEPTH);
    this.ws();
    if (this.i < this.s.length) this.syntax("trailing characters");
    return value;
  }

  private syntax(what: string): never {
    throw new Refusal({ code: "not_json", detail: `${what} at character ${this.i + 1}` });
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0d || c === 0x09 || c === 0x0a) i++;
      else break;
    }
    this.i = i;
  }

  private value(depth: number): Json {
    this.ws();
    const c = this.s.charCodeAt(this.i);
    switch (c) {
      case 0x7b:
        return this.object(depth - 1);
      case 0x5b:
        return this.array(depth - 1);
      case 0x22:
        this.i++;
        return this.string();
      case 0x74:
        return this.word("true", true);
      case 0x66:
        return this.word("false", false);
      case 0x6e:
        return this.word("null", null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        return this.syntax(Number.isNaN(c) ? "end of frame while reading a value" : "expected a value");
    }
  }

  private word<T extends boolean | null>(word: string, result: T): T {
    if (!this.s.startsWith(word, this.i)) this.syntax("expected a value");
    this.i += word.length;
    return result;
  }

  private number(): number {
    const s = this.s;
    const start = this.i;
    if (s.charCodeAt(this.i) === 0x2d) this.i++;
    const first = s.charCodeAt(this.i);
    if (first === 0x30) {
      this.i++;
    } else if (first >= 0x31 && first <= 0x39) {
      this.digits();
    } else {
      this.syntax("invalid number");
    }
    let integer = true;
    if (s.charCodeAt(this.i) === 0x2e) {
      integer = false;
      this.i++;
      if (!isDigit(s.charCodeAt(this.i))) this.syntax("invalid number");
      this.digits();
    }
    const e = s.charCodeAt(this.i);
    if (e === 0x65 || e === 0x45) {
      integer = false;
      this.i++;
      const sign = s.charCodeAt(this.i);
      if (sign === 0x2b || sign === 0x2d) this.i++;
      if (!isDigit(s.charCodeAt(this.i))) this.syntax("invalid number");
      this.digits();
    }
    // A digit right after a leading 0 (`01`) is not JSON, and the loop above stops before it.
    if (isDigit(s.charCodeAt(this.i))) this.syntax("invalid number");
    const lexeme = s.slice(start, this.i);
    const value = Number(lexeme);
    if (integer ? !(Math.abs(value) <= MAX_SAFE) : !Number.isFinite(value)) throw new Refusal({ code: "number_out_of_range", lexeme });
    return value;
  }

  private digits(): void {
    while (isDigit(this.s.charCodeAt(this.i))) this.i++;
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    // Most strings hold no escape: take them in one slice.
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
      if (this.i >= s.length) this.syntax("end of frame inside a string");
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(run, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.syntax("control character inside a string");
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += s.slice(run, this.i);
      this.i++;
      out += this.escape();
      run = this.i;
    }
  }

  private escape(): string {
    const e = this.s.charCodeAt(this.i++);
    switch (e) {
      case 0x22:
        return '"';
      case 0x5c:
        return "\\";
      case 0x2f:
        return "/";
      case 0x62:
        return "\b";
      case 0x66:
        return "\f";
      case 0x6e:
        return "\n";
      case 0x72:
        return "\r";
      case 0x74:
        return "\t";
      case 0x75:
        return this.unicode();
      default:
        return this.syntax("invalid escape");
    }
  }

  private unicode(): string {
    const n = this.hex4();
    if (n >= 0xdc00 && n <= 0xdfff) throw new Refusal({ code: "lone_surrogate" });
    if (n < 0xd800 || n > 0xdbff) return String.fromCharCode(n);
    if (this.s.charCodeAt(this.i) !== 0x5c || this.s.charCodeAt(this.i + 1) !== 0x75) throw new Refusal({ code: "lone_surrogate" });
    this.i += 2;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) throw new Refusal({ code: "lone_surrogate" });
    return String.fromCharCode(n, low);
  }

  private hex4(): number {
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.s.charCodeAt(this.i);
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
      if (d < 0) this.syntax("invalid \\u escape");
      this.i++;
      n = n * 16 + d;
    }
    return n;
  }

  private array(depth: number): Json[] {
    if (depth < 0) throw new Refusal({ code: "too_deep" });
    this.i++;
    const out: Json[] = [];
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s.charCodeAt(this.i);
      this.i++;
      if (c === 0x5d) return out;
      if (c !== 0x2c) this.syntax("expected `,` or `]`");
    }
  }

  private object(depth: number): { [key: string]: Json } {
    if (depth < 0) throw new Refusal({ code: "too_deep" });
    this.i++;
    const out = new Members() as { [key: string]: Json };
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x22) this.syntax("expected a string key");
      this.i++;
      const key = this.string();
      if (Object.hasOwn(out, key)) throw new Refusal({ code: "duplicate_key", key });
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x3a) this.syntax("expected `:`");
      this.i++;
      out[key] = this.value(depth);
      this.ws();
      const c = this.s.charCodeAt(this.i);
      this.i++;
      if (c === 0x7d) return out;
      if (c !== 0x2c) this.syntax("expected `,` or `}`");
    }
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** One line for an operator: why a frame is not a message. */
export function describeUnreadable(u: Unreadable): string {
  switch (u.code) {
    case "inner_carriage_return":
      return "it holds a carriage return before its end, which a reader ending lines at \\r would take for several messages";
    case "not_utf8":
      return "it is not UTF-8";
    case "byte_order_mark":
      return "it starts with a byte order mark";
    case "not_json":
      return `it is not JSON (${u.detail})`;
    case "lone_surrogate":
      return "a \\u escape names a lone surrogate, which readers take differently";
    case "duplicate_key":
      return `an object names the key ${JSON.stringify(u.key.length > 64 ? `${u.key.slice(0, 64)}…` : u.key)} twice, which readers take differently`;
    case "too_deep":
      return `it nests deeper than ${MAX_FRAME_DEPTH} levels`;
    case "number_out_of_range":
      return `the number ${u.lexeme.length > 40 ? `${u.lexeme.slice(0, 40)}…` : u.lexeme} is beyond what every reader holds exactly`;
  }
}

/**
 * A frame that reads strictly, as `JSON.stringify` writes the value read; a frame that does
 * not read is kept as it came, for the recorder to refuse and record by its own bytes.
 */
export function reencoded(frame: Buffer): Buffer {
  const reading = readFrame(frame);
  return reading.ok ? Buffer.from(JSON.stringify(reading.value), "utf8") : frame;
}
