import type { SignatureToCheck } from "../crypto/signing.js";
import { readRow, type ReadRow } from "../wire/row-read.js";
import { isJsonObject } from "../wire/json.js";
import type { LineHash } from "../wire/digest.js";
import type { Row } from "../wire/row-splitter.js";
import { RecordReadError } from "./row-verifier.js";
import { PieceCutter, type ByteSource, type LongRow, type Piece } from "./piece-cutter.js";
import type { RowPool } from "./row-pool.js";
import type { RowItem } from "./row-work.js";
import type { PieceReply } from "./row-worker.js";
import { ChainWalk, type WalkOptions } from "./walk.js";
import { checkNow, type SignatureChecker, type SigningInput } from "./signature-checker.js";
import type { Verification } from "./verdict.js";

/**
 * The split walk (ADR 0027): worker threads split, parse, canonicalize and hash each row
 * and check its signature (row-work.ts); this thread reads the record in pieces and walks
 * the answers in file order through the sequential walk itself (walk.ts), which decides
 * everything order decides: the links, the Sessions, the caps, the first failure. So the
 * answer is the sequential walk's by construction (SPEC §8.2), and this thread's own work
 * per Line is a handful of comparisons.
 *
 * Memory: at most `window` pieces are read and not yet walked, whatever the thread count:
 * the reader waits for the oldest (SPEC §13, memory flat in the record and in the threads).
 */

/** How the split walk cuts a record; the defaults are measured (`npm run bench:verify-scale`). */
export interface SplitTuning {
  /** Bytes a piece holds at most (more for a row of the bound). */
  readonly pieceBytes: number;
  /** Bytes read and not yet walked, at most, shared by every thread. */
  readonly budgetBytes: number;
}

export const DEFAULT_SPLIT: SplitTuning = { pieceBytes: 256 << 10, budgetBytes: 4 << 20 };

/**
 * Pieces out at once: two a thread and one being walked, so that no thread waits for the
 * walk, within the budget, which no thread count raises.
 */
export function windowOf(tuning: SplitTuning, threads: number): number {
  return Math.max(2, Math.min(2 * threads + 1, Math.floor(tuning.budgetBytes / Math.max(1, tuning.pieceBytes))));
}

/** The worker's answer for the row the walk is on: its signature check, when the key it guessed is the Session's. */
class WorkerAnswers implements SignatureChecker {
  item: Extract<RowItem, { v: unknown }> | undefined;
  keys: readonly string[] = [];
  /** The row's bytes, read again only for a check made here. */
  row: Uint8Array | undefined;

  check(claim: SignatureToCheck, input: SigningInput): boolean {
    const item = this.item;
    if (item !== undefined && item.s !== -1 && this.keys[item.k] === claim.key.hex) return item.s === 1;
    // A wrong guess of key (an `open` the reader's search missed): checked here, the same
    // check, on the row's own signature (the worker sent a stand-in, row-work.ts).
    const read = this.row === undefined ? undefined : readRow(this.row);
    const signature = read?.ok === true && isJsonObject(read.value) ? read.value["signature"] : undefined;
    return typeof signature === "string" && checkNow({ ...claim, signature }, input);
  }
}

type Part = { readonly code: "read"; readonly reply: PieceReply; readonly piece: Piece } | LongRow;

/**
 * Walk the record `source` holds on `pool`'s threads. `name` names it in a RecordReadError.
 *
 * @throws RecordReadError when the record cannot be read.
 */
export async function splitWalk(
  source: ByteSource,
  name: string,
  options: WalkOptions,
  pool: RowPool,
  limit: number,
  onRead: (bytes: number) => void,
  tuning: SplitTuning = DEFAULT_SPLIT,
): Promise<Verification> {
  const answers = new WorkerAnswers();
  const walk = new ChainWalk(options, answers);
  const cutter = new PieceCutter(source, tuning.pieceBytes, limit, onRead);
  const window = windowOf(tuning, pool.size);
  const out: Promise<Part>[] = [];
  let reading = true;
  let rows = 0;
  const send = (part: Piece | LongRow): Promise<Part> =>
    part.code === "long"
      ? Promise.resolve(part)
      : pool.read({ bytes: part.bytes, length: part.length, limit, hint: part.hint }).then((reply) => ({ code: "read", reply, piece: part }));
  for (;;) {
    while (reading && out.length < window) {
      let part: Piece | LongRow | undefined;
      try {
        part = await cutter.next();
      } catch (error) {
        throw new RecordReadError(name, error);
      }
      if (part === undefined) reading = false;
      else out.push(send(part));
    }
    const next = out.shift();
    if (next === undefined) break;
    const part = await next;
    if (part.code === "long") {
      walk.step({ ...part.row, number: ++rows });
    } else {
      rows = walkPiece(walk, answers, part, rows, options.onLine !== undefined, limit);
      cutter.give(part.reply.bytes);
    }
    // The first Tampered ends the walk: the rest of the record is not read.
    if (walk.done) break;
  }
  // Pieces still out are left to finish on their threads; their answers are not needed.
  for (const left of out) left.catch(() => undefined);
  return walk.finish();
}

/** Walk a piece's rows in order; answers the number of rows walked so far. */
function walkPiece(walk: ChainWalk, answers: WorkerAnswers, part: Extract<Part, { code: "read" }>, before: number, full: boolean, limit: number): number {
  const { items, at, keys } = part.reply.answer;
  const bytes = Buffer.from(part.reply.bytes, 0, part.piece.length);
  answers.keys = keys;
  let rows = before;
  let previous: string | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === undefined) break;
    const start = at[2 * i] ?? 0;
    const offset = part.piece.offset + start;
    rows++;
    if ("t" in item) {
      answers.item = undefined;
      walk.step({ code: "too_long", number: rows, offset, length: item.t, limit });
    } else {
      const row: Extract<Row, { code: "row" }> = { code: "row", number: rows, offset, bytes: bytes.subarray(start, at[2 * i + 1] ?? start) };
      answers.item = "v" in item ? item : undefined;
      answers.row = row.bytes;
      // The worker left out a `prev_hash` that is the row before's hash: it is that string.
      if ("v" in item && item.p === 1 && item.v !== null) (item.v as Record<string, unknown>)["prev_hash"] = previous;
      previous = "h" in item ? item.h : undefined;
      walk.step(row, "f" in item ? { ok: false, fault: item.f, detail: item.d } : full ? readRow(row.bytes) : linkedRead(item.v, item.h, row.bytes));
    }
    if (walk.done) break;
  }
  answers.item = undefined;
  return rows;
}

/** A row as the worker read it: the members the walk reads, and its hash; the rest is read again only if asked for. */
function linkedRead(value: ReadRowValue, lineHash: string, bytes: Uint8Array): ReadRow {
  const again = (): Extract<ReadRow, { ok: true }> => {
    const read = readRow(bytes);
    if (!read.ok) throw new Error("a row a worker read does not read again");
    return read;
  };
  return { ok: true, value, lineHash: lineHash as LineHash, signingInput: () => again().signingInput(), canonical: () => again().canonical() };
}

type ReadRowValue = Extract<ReadRow, { ok: true }>["value"];
