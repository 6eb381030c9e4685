import type { SignatureToCheck } from "../crypto/signing.js";
import { KeyId, type LineHash } from "../wire/digest.js";
import { fromCheckedHex } from "../wire/hex.js";
import { isJsonObject, type JsonObject, type JsonValue } from "../wire/json.js";
import { readRow, type ReadRow } from "../wire/row-read.js";
import type { Row } from "../wire/row-splitter.js";
import {
  ABSENT,
  AnswerWriter,
  CHECK,
  DETAIL,
  END,
  HASH_CHARS,
  KEY,
  KEYS_ID,
  KIND,
  LINKED_MEMBERS,
  LINKS_BACK,
  MEMBERS,
  OTHER,
  ROW_DOES_NOT_PARSE,
  ROW_NOT_OBJECT,
  ROW_OUTSIDE_VALUE_SPACE,
  ROW_TOO_LONG,
  START,
  STRIDE,
  WELL_FORMED,
  type PieceAnswer,
} from "./piece-answer.js";
import { checkNow, type SignatureChecker, type SigningInput } from "./signature-checker.js";
import type { ChainWalk } from "./walk.js";

/** No piece: the answer read between pieces. */
const NO_PIECE: PieceAnswer = new AnswerWriter().finish([], 0, undefined);

/** A `signature` the walk will find well formed: it only asks whether it is; the check was made on the worker. */
const WELL_FORMED_SIGNATURE = "0".repeat(128);

/**
 * A thread's answer for a piece (piece-answer.ts), read on the walking thread a row at a
 * time, as the walk reaches it: each row becomes the Row and the ReadRow the sequential walk
 * takes (walk.ts, `step`), holding the members the walk reads. It is also the walk's
 * signature checker: it gives the worker's check when the worker made it under the Session's
 * actual key, and otherwise checks here, on the row read again (ADR 0027). The same for
 * `aegis verify`'s calling thread and the report page's main thread (ADR 0028).
 */
export class PieceRows implements SignatureChecker {
  private answer = NO_PIECE;
  private bytes: Uint8Array = new Uint8Array(0);
  /** Where the row being walked starts in `answer.rows`. */
  private at = 0;
  /** The line hash of the row before, which a `prev_hash` of LINKS_BACK is. */
  private previous: LineHash | undefined;
  /** The key id of each key of the piece, as it is first asked for. */
  private readonly keyIds = new Map<number, string>();
  /** Checks made on this thread, as a thread's guess of key was wrong or it checked nothing. */
  madeHere = 0;

  /** How many rows the piece holds. */
  get length(): number {
    return this.answer.rows.length / STRIDE;
  }

  /** Read the rows of a piece: `bytes` are the piece's, as the worker read them. */
  begin(answer: PieceAnswer, bytes: Uint8Array): void {
    this.answer = answer;
    this.bytes = bytes;
    this.previous = undefined;
    this.keyIds.clear();
  }

  /** Done with the piece: nothing of it is held. */
  end(): void {
    this.begin(NO_PIECE, new Uint8Array(0));
    this.read = undefined;
  }

  /** What the worker read of the row last asked for: undefined for a row over the bound. */
  read: ReadRow | undefined;

  /** Row `i` of the piece, numbered `number`, the piece being at `offset` in the record; what the worker read of it is then {@link PieceRows.read}. */
  row(i: number, number: number, offset: number, limit: number): Row {
    if (i >= this.length) throw new Error(`no row ${i} in a piece of ${this.length}`);
    this.at = STRIDE * i;
    const kind = this.field(KIND);
    const start = this.field(START);
    const end = this.field(END);
    if (kind === ROW_TOO_LONG) {
      this.read = undefined;
      return { code: "too_long", number, offset: offset + start, length: end, limit };
    }
    const row: Row = { code: "row", number, offset: offset + start, bytes: this.bytes.subarray(start, end) };
    if (kind === ROW_DOES_NOT_PARSE || kind === ROW_OUTSIDE_VALUE_SPACE) {
      this.previous = undefined;
      const detail = this.string(this.field(DETAIL));
      this.read = { ok: false, fault: kind === ROW_DOES_NOT_PARSE ? "does_not_parse" : "outside_value_space", detail };
      return row;
    }
    const lineHash = this.answer.hashes.slice(i * HASH_CHARS, (i + 1) * HASH_CHARS) as LineHash;
    const value = kind === ROW_NOT_OBJECT ? null : this.members();
    this.previous = lineHash;
    this.read = { ok: true, value, lineHash, signingInput: this.signingInput, canonical: this.canonical };
    return row;
  }

  check(claim: SignatureToCheck, input: SigningInput): boolean {
    const checked = this.field(CHECK);
    if (checked !== -1 && this.answer.keys[this.field(KEY)] === claim.key.hex) return checked === 1;
    // A wrong guess of key (an `open` the reader's search missed): checked here, the same
    // check, on the row's own signature (the worker sent a stand-in).
    this.madeHere++;
    const read = this.readAgain();
    const signature = isJsonObject(read.value) ? read.value["signature"] : undefined;
    return typeof signature === "string" && checkNow({ ...claim, signature }, input);
  }

  /** A number of the row being walked (piece-answer.ts). */
  private field(field: number): number {
    return this.answer.rows[this.at + field] ?? ABSENT;
  }

  private string(index: number): string {
    const text = this.answer.strings[index];
    if (text === undefined) throw new Error(`a row thread answered string ${index} of ${this.answer.strings.length}`);
    return text;
  }

  private number(index: number): number {
    const value = this.answer.numbers[index];
    if (value === undefined) throw new Error(`a row thread answered number ${index} of ${this.answer.numbers.length}`);
    return value;
  }

  private members(): JsonObject {
    const value: Record<string, JsonValue> = {};
    LINKED_MEMBERS.forEach((name, i) => {
      const slot = this.field(MEMBERS + i);
      if (slot !== ABSENT) value[name] = this.member(slot);
    });
    return value;
  }

  private member(slot: number): JsonValue {
    if (slot >= 0) return (slot & 1) === 1 ? this.number(slot >> 1) : this.string(slot >> 1);
    if (slot === LINKS_BACK) return this.previous ?? null;
    if (slot === WELL_FORMED) return WELL_FORMED_SIGNATURE;
    if (slot === KEYS_ID) return this.keyIdOf(this.field(KEY));
    if (slot === OTHER) return null;
    throw new Error(`a row thread answered a member slot ${slot}`);
  }

  /** The key id of key `k` of the piece, the string the worker compared a `key_id` with. */
  private keyIdOf(k: number): string {
    let id = this.keyIds.get(k);
    if (id === undefined) {
      const hex = this.answer.keys[k];
      if (hex === undefined) throw new Error(`a row thread answered key ${k} of ${this.answer.keys.length}`);
      id = KeyId.of(fromCheckedHex(hex));
      this.keyIds.set(k, id);
    }
    return id;
  }

  /** The row being walked, read here: only when the walk asks for what the worker did not send. */
  private readAgain(): Extract<ReadRow, { ok: true }> {
    const read = readRow(this.bytes.subarray(this.field(START), this.field(END)));
    if (!read.ok) throw new Error("a row a worker read does not read again");
    return read;
  }

  private readonly signingInput = (): string => this.readAgain().signingInput();
  private readonly canonical = (): Uint8Array | string => this.readAgain().canonical();
}

/**
 * Walk the rows of `piece`, which lies at `offset` in the record, in order, from its thread's
 * `answer`; answers the number of rows walked so far (`before` until this piece). Where the
 * thread stopped at its budget and the walk goes on, `rest` reads the rest of the piece here
 * (the bytes from where the thread stopped, and the key it had reached), a budget at a time,
 * by the same readPiece: the walk is given the same rows either way (ADR 0027, point 7).
 * With `full` (the walk hands on every member of each Line, `onLine`), each row is read here
 * in full.
 */
export function walkPiece(
  walk: ChainWalk,
  rows: PieceRows,
  piece: Uint8Array,
  offset: number,
  answer: PieceAnswer,
  before: number,
  limit: number,
  full: boolean,
  rest: (bytes: Uint8Array, hint: string | undefined) => PieceAnswer,
): number {
  let from = 0;
  let number = before;
  for (let read = answer; ;) {
    rows.begin(read, piece.subarray(from));
    for (let i = 0; i < rows.length && !walk.done; i++) {
      const row = rows.row(i, ++number, offset + from, limit);
      walk.step(row, full && row.code === "row" ? readRow(row.bytes) : rows.read);
    }
    rows.end();
    from += read.readTo;
    if (walk.done || from >= piece.length) return number;
    read = rest(piece.subarray(from), read.hintAt);
  }
}
