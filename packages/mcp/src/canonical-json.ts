import type { Json } from "./message.js";
import { FaultError } from "@aegis/format";

/**
 * RFC 8785 (JCS) over any JSON value (SPEC §17.6): members sorted by UTF-16 code units,
 * strings and numbers as ECMAScript writes them, no white space. The Chain's own canonical
 * form refuses floats, negatives and `null` (SPEC §3.2); a tool's JSON Schema has all three,
 * so tool definitions take the full rule. Undefined when a string holds a lone surrogate,
 * which RFC 8785 cannot write, or when the value nests too deep to walk.
 */
export function canonicalJson(value: Json): string | undefined {
  try {
    return write(value);
  } catch (error) {
    if (error instanceof NotCanonical || error instanceof RangeError) return undefined;
    throw error;
  }
}

class NotCanonical extends FaultError<{ readonly code: "lone_surrogate" }> {
  constructor() {
    super("NotCanonical", { code: "lone_surrogate" }, () => "a string holds a lone surrogate, which has no canonical form");
  }
}

function write(value: Json): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  // JSON.parse never yields NaN or an infinity; JSON.stringify writes -0 as 0, as JCS does.
  if (typeof value === "number") return JSON.stringify(value);
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw new NotCanonical();
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${(value as readonly Json[]).map(write).join(",")}]`;
  const object = value as { readonly [key: string]: Json };
  const parts: string[] = [];
  for (const key of Object.keys(object).sort()) {
    if (!key.isWellFormed()) throw new NotCanonical();
    parts.push(`${JSON.stringify(key)}:${write(object[key] ?? null)}`);
  }
  return `{${parts.join(",")}}`;
}
