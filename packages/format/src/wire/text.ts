/**
 * Text rules shared by every reader of rows, keys and trust stores: strict UTF-8 that
 * keeps a byte order mark as content, and Unicode White_Space, which is what the
 * reference's `str::trim` removes (not JavaScript's set: U+0085 is in it, U+FEFF is not).
 */
const WHITE_SPACE = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const BLANK = new RegExp(`^[${WHITE_SPACE}]*$`);
const EDGES = new RegExp(`^[${WHITE_SPACE}]+|[${WHITE_SPACE}]+$`, "g");

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of `bytes`, or undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/** True when `text` holds only Unicode White_Space (or nothing). */
export function isBlank(text: string): boolean {
  return BLANK.test(text);
}

/** `text` without leading and trailing Unicode White_Space. */
export function trimWhiteSpace(text: string): string {
  return text.replace(EDGES, "");
}

/**
 * `s` in memory of its own: a string parsed from a row is a slice of it, and keeping it
 * would keep the whole row. Taking a part of a concatenation first joins the concatenation
 * into a new string of its own, copying every UTF-16 unit, lone surrogates too; the part
 * then keeps only that copy, one unit longer than `s`. No Node API, and some 20 times
 * quicker than the JSON round trip it replaced, a large part of the calling thread's work
 * in the split walk, which detaches every intent's `call_id` (ADR 0027).
 */
export function detachedString(s: string): string {
  return (s + " ").slice(0, s.length);
}
