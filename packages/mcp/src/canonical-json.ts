import canonicalize from "canonicalize";
import type { Json } from "./message.js";

/**
 * RFC 8785 (JCS) over any JSON value (SPEC §17.6): members sorted by UTF-16 code units,
 * strings and numbers as ECMAScript writes them, no white space. The Chain's own canonical
 * form refuses floats, negatives and `null` (SPEC §3.2); a tool's JSON Schema has all three,
 * so tool definitions take the full rule, from `canonicalize`, by the RFC's author (ADR 0039).
 * Undefined when a string holds a lone surrogate, which RFC 8785 cannot write: for a value
 * read from JSON, that is the one thing it throws for (no NaN, no infinity, no cycle).
 */
export function canonicalJson(value: Json): string | undefined {
  try {
    return canonicalize(value);
  } catch {
    return undefined;
  }
}
