import { isJsonObject } from "@aegis/format/internal";
import { OutOfSpaceNumber, type JsonValue } from "@aegis/format";

/**
 * JSON Pointer (RFC 6901) over the verbatim request JSON (SPEC §15.2). A pointer is `""`
 * (the whole document) or a sequence of `/`-prefixed reference tokens in which `~1` stands
 * for `/` and `~0` for `~`; any other `~` makes the pointer invalid.
 */
export function parsePointer(pointer: string): readonly string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return undefined;
  const tokens: string[] = [];
  for (const raw of pointer.slice(1).split("/")) {
    if (/~(?![01])/u.test(raw)) return undefined;
    tokens.push(raw.replaceAll("~1", "/").replaceAll("~0", "~"));
  }
  return tokens;
}

/**
 * The value a pointer names, or undefined when there is none. An array index is `0` or a
 * decimal without leading zeros, below the array's length; `-` (one past the end) never
 * names a value. Duplicate object keys were already resolved last-wins by the reader.
 */
export function resolvePointer(document: JsonValue, tokens: readonly string[]): JsonValue | undefined {
  let current: JsonValue = document;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!/^(?:0|[1-9][0-9]*)$/u.test(token)) return undefined;
      const next: JsonValue | undefined = (current as readonly JsonValue[])[Number(token)];
      if (next === undefined) return undefined;
      current = next;
    } else if (isJsonObject(current)) {
      if (!Object.hasOwn(current, token)) return undefined;
      const next: JsonValue | undefined = current[token];
      if (next === undefined) return undefined;
      current = next;
    } else {
      return undefined;
    }
  }
  return current;
}

/** Is `value` the JSON integer `n`? Judged on the text: `5.0` is a float, not 5. */
export function isJsonInteger(value: JsonValue, n: bigint): boolean {
  if (typeof value === "number") return Number.isSafeInteger(value) && BigInt(value) === n;
  if (value instanceof OutOfSpaceNumber) return value.kind !== "float" && value.lexeme === n.toString();
  return false;
}

/**
 * Would a reader of IEEE doubles (`JSON.parse`) take `value` for the integer `n`, although
 * its text is not `n`'s? Such a value is neither `n` nor not `n` to a matcher (SPEC §15.2).
 */
export function readsAsInteger(value: JsonValue, n: bigint): boolean {
  return value instanceof OutOfSpaceNumber && value.lexeme !== n.toString() && Number(value.lexeme) === Number(n);
}
