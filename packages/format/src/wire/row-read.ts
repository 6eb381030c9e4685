import { CanonicalFormError, canonicalize, describeCanonicalFault, joinMembers, members } from "./canonical.js";
import { LineHash } from "./digest.js";
import { JsonSyntaxError, isJsonObject, parseRow, type JsonValue } from "./json.js";
import { decodeUtf8 } from "./text.js";

/**
 * One row read as a Line: its value, its `line_hash` and its signing input (SPEC §3, §4),
 * or why it has none. The verifier and the writer (which back-references the last row of
 * a file it reopens) read rows with this one function, so they cannot disagree on a hash.
 */
export type ReadRow =
  | {
      readonly ok: true;
      readonly value: JsonValue;
      readonly lineHash: LineHash;
      readonly signingInput: () => string;
      /**
       * For a canonical row of ASCII text holding a signature: the bytes [start, end) of the
       * row to leave out to get the signing input, so a verifier can copy it without
       * building a string.
       */
      readonly signingCut?: { readonly start: number; readonly end: number };
      /** The canonical form `lineHash` hashes: the row itself when it already is one. */
      readonly canonical: () => Uint8Array | string;
    }
  | { readonly ok: false; readonly fault: "does_not_parse" | "outside_value_space"; readonly detail: string };

/**
 * What a verifier makes of a row that has no Line (SPEC §8.2 steps 1-2) when it is the file's
 * last non-blank row: one that does not parse may be a write cut short, `torn`; one that parses
 * but has no canonical form was written whole, so it is `tampered` (`malformed_line`) wherever
 * it stands. The walk asks this, and so does the writer reading a file's tail, which is what
 * `repair` may cut off: the two cannot disagree on what a torn write is.
 */
export function unreadFinalRow(read: Extract<ReadRow, { ok: false }>): "torn" | "tampered" {
  return read.fault === "does_not_parse" ? "torn" : "tampered";
}

export function readRow(bytes: Uint8Array): ReadRow {
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, fault: "does_not_parse", detail: "not JSON: stream did not contain valid UTF-8" };
  let parsed;
  try {
    parsed = parseRow(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { ok: false, fault: "does_not_parse", detail: `not JSON: ${error.message}` };
  }
  const value = parsed.value;
  // A row that already is its canonical form (every row a writer writes is) is hashed as
  // it is; any other row is canonicalized first, so an emitter's spacing cannot change a
  // hash (ADR 0003).
  if (parsed.canonical && isJsonObject(value)) {
    const span = parsed.signature;
    if (span === undefined) return { ok: true, value, lineHash: LineHash.of(bytes), canonical: () => bytes, signingInput: () => text };
    const start = span.first ? span.start : span.start - 1;
    const end = span.first && !span.last ? span.end + 1 : span.end;
    return {
      ok: true,
      value,
      lineHash: LineHash.of(bytes),
      canonical: () => bytes,
      signingInput: () => text.slice(0, start) + text.slice(end),
      // ASCII: a string index is a byte offset.
      ...(bytes.length === text.length ? { signingCut: { start, end } } : {}),
    };
  }
  try {
    if (isJsonObject(value)) {
      const sorted = members(value);
      const canonical = joinMembers(sorted);
      return { ok: true, value, lineHash: LineHash.of(canonical), canonical: () => canonical, signingInput: () => joinMembers(sorted, "signature") };
    }
    const canonical = canonicalize(value);
    return { ok: true, value, lineHash: LineHash.of(canonical), canonical: () => canonical, signingInput: () => "" };
  } catch (error) {
    if (!(error instanceof CanonicalFormError)) throw error;
    return {
      ok: false,
      fault: "outside_value_space",
      detail: `outside the canonical value space, so it has no reproducible hash: ${describeCanonicalFault(error.fault)}`,
    };
  }
}
