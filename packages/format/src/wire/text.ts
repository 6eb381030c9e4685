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
 * would keep the whole row. A JSON round trip builds a new string and keeps every JS
 * string, lone surrogates too (`JSON.stringify` escapes them), with no Node API.
 */
export function detachedString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}
