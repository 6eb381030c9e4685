// What the strict reader (json.ts) gives: its values, and its one error.

/**
 * A JSON value as the strict reader gives it. A number outside the value space is an
 * {@link OutOfSpaceNumber} holding its spelling, not a JavaScript number, so that the
 * canonical form can refuse it by how the row wrote it (SPEC §3.2, §3.3). An array's elements
 * are in the row's order.
 */
export type JsonValue = string | number | boolean | null | OutOfSpaceNumber | readonly JsonValue[] | JsonObject;
import { FaultError } from "../fault-error.js";
/** A JSON array as the strict reader gives it, its elements in the row's order. */
export type JsonArray = readonly JsonValue[];
/** A JSON object as the strict reader gives it; a key written twice keeps its last value (SPEC §3.3). */
export interface JsonObject {
  /** A member's value, under its key with escapes decoded (`"\u0061"` is `a`). */
  readonly [key: string]: JsonValue;
}

/** Why a number is outside the value space (SPEC §3.2). */
export type OutOfSpaceKind = "float" | "negative" | "too_large";

/** A JSON number the value space refuses; kept so the canonical form can name it. */
export class OutOfSpaceNumber {
  constructor(
    /** The number exactly as the row wrote it, e.g. `1.0` or `18446744073709551615`. */
    readonly lexeme: string,
    /** Which rule of the value space its spelling breaks. */
    readonly kind: OutOfSpaceKind,
  ) {}
}

/** Text that is no JSON value: why, and where, as serde_json says it. */
export interface JsonSyntaxFault {
  readonly reason: string;
  /** 1-based column in UTF-8 bytes, as serde_json counts it. */
  readonly column: number;
}

export class JsonSyntaxError extends FaultError<JsonSyntaxFault> {
  constructor(
    readonly reason: string,
    /** 1-based column in UTF-8 bytes, as serde_json counts it. */
    readonly column: number,
  ) {
    super("JsonSyntaxError", { reason, column }, (f) => `${f.reason} at line 1 column ${f.column}`);
  }
}
