/**
 * What a worker answers for a piece of the record (piece-read.ts), in a form the main thread
 * reads without a structured clone of an object a row: numbers in two typed arrays
 * (transferred, not copied) and the strings one after another in one text, each read back as
 * a slice of it. Per row: how it read, where it lies in the piece, its signature check, its
 * `line_hash`, and the members of the Line the walk reads; nothing else of a Line crosses.
 */
import type { JsonObject, JsonValue, ReadRow } from "@aegis/format/browser";

/**
 * The members of a Line the format's walk reads (walk.ts: the header, a Session's open and
 * continuation, step 6 by type, and the signature claim); the rest stay on the worker. A
 * walk handed a value with these members answers as with the whole Line.
 */
export const LINKED_MEMBERS = ["line_type", "seq", "prev_hash", "prev_session_tail", "public_key", "call_id", "approval_id", "signature", "key_id"] as const;

/** How a row read. */
export const RowKind = {
  Object: 0,
  /** Parsed, with a canonical form, but not an object: the walk finds no `line_type`. */
  NotObject: 1,
  DoesNotParse: 2,
  OutsideValueSpace: 3,
  /** Over the row bound (SPEC §13.1); its third number is the row's length. */
  TooLong: 4,
} as const;

/** How a member crosses. */
export const Member = {
  Absent: 0,
  /** A string: its start and length in the text. */
  Text: 1,
  /** A number: its index among the numbers. */
  Number: 2,
  /** Neither: the walk asks of a member only whether it is a string or a number, or present. */
  Other: 3,
  /** A `signature` of 128 lowercase hex: checked on the worker, and the walk asks no more of it. */
  WellFormedSignature: 4,
  /** A `prev_hash` that is the `line_hash` of the row before it in the piece. */
  PreviousHash: 5,
} as const;

/** Numbers a row: kind, start, end (or length), check, key, text start, text length, then three a member. */
export const STRIDE = 7 + 3 * LINKED_MEMBERS.length;

/** A piece's rows, read. */
export interface PieceAnswer {
  readonly rows: number;
  readonly ints: Int32Array<ArrayBuffer>;
  readonly numbers: Float64Array<ArrayBuffer>;
  readonly text: string;
  /** The public keys (hex) the signature checks were made under; a row's key is an index into these. */
  readonly keys: readonly string[];
  /**
   * Where the rows not read start in the piece: its length when every row was read. A worker
   * reads no more rows than its budget (piece-read.ts); the rest is read on the main thread,
   * and only if the walk gets there.
   */
  readonly readTo: number;
}

/**
 * What the walk's signature claim finds in a well-formed signature: the check itself was made
 * on the worker, and should it have to be made here, the row is read again.
 */
export const WELL_FORMED_SIGNATURE = "0".repeat(128);

type Value = Extract<ReadRow, { ok: true }>["value"];
type Hash = Extract<ReadRow, { ok: true }>["lineHash"];

/** One row of a piece as the walk takes it: the ReadRow the worker's `readRow` gave, less the members the walk does not read. */
export function readRowOf(answer: PieceAnswer, row: number, previous: string | undefined, again: () => Extract<ReadRow, { ok: true }>): ReadRow {
  const { ints, text } = answer;
  const at = row * STRIDE;
  const kind = ints[at] ?? RowKind.DoesNotParse;
  const said = text.slice(ints[at + 5] ?? 0, (ints[at + 5] ?? 0) + (ints[at + 6] ?? 0));
  if (kind === RowKind.DoesNotParse || kind === RowKind.OutsideValueSpace)
    return { ok: false, fault: kind === RowKind.DoesNotParse ? "does_not_parse" : "outside_value_space", detail: said };
  const value: Value = kind === RowKind.Object ? linkedValue(answer, at, previous) : null;
  return { ok: true, value, lineHash: said as Hash, signingInput: () => again().signingInput(), canonical: () => again().canonical() };
}

function linkedValue(answer: PieceAnswer, at: number, previous: string | undefined): JsonObject {
  const { ints, numbers, text } = answer;
  const value: Record<string, JsonValue> = {};
  for (let m = 0; m < LINKED_MEMBERS.length; m++) {
    const name = LINKED_MEMBERS[m] ?? "";
    const i = at + 7 + 3 * m;
    const a = ints[i + 1] ?? 0;
    const tag = ints[i];
    if (tag === Member.Text) value[name] = text.slice(a, a + (ints[i + 2] ?? 0));
    else if (tag === Member.Number) value[name] = numbers[a] ?? Number.NaN;
    else if (tag === Member.Other) value[name] = null;
    else if (tag === Member.WellFormedSignature) value[name] = WELL_FORMED_SIGNATURE;
    else if (tag === Member.PreviousHash) value[name] = previous ?? null;
  }
  return value;
}
