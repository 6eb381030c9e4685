/**
 * The order-free half of the walk, in a worker of the page (issue 31; SPEC §8.2 frees the
 * order of the work, not of the answer): a piece of the record, whole rows only, is split
 * as the format's row splitter splits it, each row read by the format's `readRow` (parse,
 * canonical form, `line_hash`), and its signature checked under the key of the Session it
 * seems to be in. The main thread walks the answers in file order through the format's own
 * walk (split-walk.ts), which decides everything order decides (adr/0028).
 */
import { RowSplitter, checkHex, fromCheckedHex, isJsonObject, readRow, type JsonValue, type Row } from "@aegis/format/browser";
import { LINKED_MEMBERS, Member, RowKind, STRIDE, type PieceAnswer } from "./piece-answer.js";
import { readingPiece } from "./piece-text.js";

/** Checks one signature: by the strict rule of SPEC §8.5, now or later. */
export type CheckOne = (keyHex: string, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean>;

const UTF8 = new TextEncoder();

/**
 * Read the rows of `piece` (whole rows, the last one perhaps without its `\n`), `budget` of
 * them at most: the answer says where the rest starts (`readTo`). `hint` is the public key
 * of the last `open` before the piece, as the main thread found it: a wrong guess costs the
 * main thread a check of its own, never the answer. Without `check`, no signature is
 * checked here: the walk's checker makes the checks it asks for.
 */
export async function readPiece(piece: Uint8Array, limit: number, hint: string | undefined, check: CheckOne | undefined, budget: number): Promise<PieceAnswer> {
  const splitter = new RowSplitter(limit);
  // The budget (adr/0027, point 7): an answer is some 200 bytes a row whatever the row's
  // size, so a piece of rows of two bytes would answer a hundred times its size. A row
  // starts after a `\n`: the rest, split from there, is these same rows.
  const most = Math.max(1, budget);
  const rows: Row[] = [];
  let readTo = piece.length;
  for (const row of chain(splitter.push(piece), splitter.end())) {
    if (rows.length === most) {
      readTo = row.offset;
      break;
    }
    rows.push(row);
  }
  // Rows are decoded as slices of the piece's text, when it is all ASCII (piece-text.ts).
  readingPiece(piece);
  const out = new AnswerWriter(rows.length);
  const keys: string[] = [];
  let key = -1;
  const use = (hex: string): void => {
    if (keys[key] === hex) return;
    key = keys.length;
    keys.push(hex);
  };
  if (hint !== undefined && checkHex(hint, 64) === undefined) use(hint);
  const checks: Promise<void>[] = [];
  let before: string | undefined;
  for (const [i, row] of rows.entries()) {
    const last = before;
    before = undefined;
    if (row.code === "too_long") {
      out.row(i, RowKind.TooLong, row.offset, row.length, "");
      continue;
    }
    const read = readRow(row.bytes);
    const end = row.offset + row.bytes.length;
    if (!read.ok) {
      out.row(i, read.fault === "does_not_parse" ? RowKind.DoesNotParse : RowKind.OutsideValueSpace, row.offset, end, read.detail);
      continue;
    }
    before = read.lineHash;
    const value = read.value;
    if (!isJsonObject(value)) {
      out.row(i, RowKind.NotObject, row.offset, end, read.lineHash);
      continue;
    }
    out.row(i, RowKind.Object, row.offset, end, read.lineHash);
    const type = value["line_type"];
    const publicKey = value["public_key"];
    // An `open` is signed under its own key (the walk's step 5.7 comes before step 6).
    if (type === "open" && typeof publicKey === "string" && checkHex(publicKey, 64) === undefined) use(publicKey);
    const signature = value["signature"];
    const wellFormed = typeof signature === "string" && checkHex(signature, 128) === undefined;
    // An intent is never signed: the walk checks no signature on it.
    const keyHex = keys[key];
    if (check !== undefined && wellFormed && keyHex !== undefined && type !== "intent") {
      const message = read.signingCut === undefined ? encoded(read.signingInput()) : cut(row.bytes, read.signingCut.start, read.signingCut.end);
      const answer = check(keyHex, message, fromCheckedHex(signature));
      const k = key;
      if (typeof answer === "boolean") out.checked(i, answer, k);
      else checks.push(answer.then((passed) => out.checked(i, passed, k)));
    }
    for (const [m, name] of LINKED_MEMBERS.entries()) {
      const member = value[name];
      if (member === undefined) continue;
      if (name === "signature" && wellFormed) out.member(i, m, Member.WellFormedSignature);
      else if (name === "prev_hash" && last !== undefined && member === last) out.member(i, m, Member.PreviousHash);
      else out.value(i, m, member);
    }
  }
  readingPiece(undefined);
  await Promise.all(checks);
  return { rows: rows.length, ints: out.ints, numbers: Float64Array.from(out.numbers), text: out.text.join(""), keys, readTo };
}

function* chain<T>(first: Iterable<T>, second: Iterable<T>): Generator<T> {
  yield* first;
  yield* second;
}

/**
 * Messages are written into one buffer, used again for the next (the check reads its
 * message before it returns): a piece's checks allocate no memory of their own, which
 * otherwise kept the worker's garbage collector busy with a few hundred buffers a piece.
 */
let scratch = new Uint8Array(1 << 16);

function room(length: number): Uint8Array {
  if (length > scratch.length) scratch = new Uint8Array(Math.max(length, 2 * scratch.length));
  return scratch;
}

/** The row less its bytes [start, end): the signing input of a canonical row (SPEC §4). */
function cut(row: Uint8Array, start: number, end: number): Uint8Array {
  const length = row.length - (end - start);
  const message = room(length);
  message.set(row.subarray(0, start));
  message.set(row.subarray(end), start);
  return message.subarray(0, length);
}

/** A signing input given as text, as UTF-8. */
function encoded(text: string): Uint8Array {
  const message = room(3 * text.length);
  return message.subarray(0, UTF8.encodeInto(text, message).written);
}

class AnswerWriter {
  readonly ints: Int32Array<ArrayBuffer>;
  readonly numbers: number[] = [];
  readonly text: string[] = [];
  private length = 0;

  constructor(rows: number) {
    this.ints = new Int32Array(rows * STRIDE);
  }

  row(i: number, kind: number, start: number, end: number, said: string): void {
    const at = i * STRIDE;
    this.ints.set([kind, start, end, -1, -1, this.length, said.length], at);
    this.add(said);
  }

  checked(i: number, passed: boolean, key: number): void {
    this.ints[i * STRIDE + 3] = passed ? 1 : 0;
    this.ints[i * STRIDE + 4] = key;
  }

  member(i: number, m: number, tag: number, a = 0, b = 0): void {
    this.ints.set([tag, a, b], i * STRIDE + 7 + 3 * m);
  }

  value(i: number, m: number, member: JsonValue): void {
    if (typeof member === "string") {
      this.member(i, m, Member.Text, this.length, member.length);
      this.add(member);
    } else if (typeof member === "number") {
      this.member(i, m, Member.Number, this.numbers.length);
      this.numbers.push(member);
    } else this.member(i, m, Member.Other);
  }

  private add(text: string): void {
    if (text.length === 0) return;
    this.text.push(text);
    this.length += text.length;
  }
}
