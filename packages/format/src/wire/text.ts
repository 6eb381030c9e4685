import { errnoOf, messageOf } from "../durable/sync.js";
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
 * The text of a file-system error as the reference prints it (Rust's `io::Error`), so that
 * `error: read <path>: ...` reads the same from both implementations.
 */
const RUST_TEXT: Readonly<Record<string, string>> = {
  ENOENT: "No such file or directory (os error 2)",
  EACCES: "Permission denied (os error 13)",
  EPERM: "Operation not permitted (os error 1)",
  EISDIR: "Is a directory (os error 21)",
  ENOTDIR: "Not a directory (os error 20)",
  ELOOP: "Too many levels of symbolic links (os error 40)",
  EMFILE: "Too many open files (os error 24)",
  EIO: "Input/output error (os error 5)",
  ENOSPC: "No space left on device (os error 28)",
  EROFS: "Read-only file system (os error 30)",
  EEXIST: "File exists (os error 17)",
};

export function describeIoError(error: unknown): string {
  const code = errnoOf(error);
  const text = code === undefined ? undefined : RUST_TEXT[code];
  return text ?? messageOf(error);
}

/**
 * `s` in memory of its own (a UTF-16 round trip keeps every JS string, lone surrogates too):
 * a string parsed from a row is a slice of it, and keeping it would keep the whole row.
 */
export function detachedString(s: string): string {
  return Buffer.from(s, "utf16le").toString("utf16le");
}
