import { RecordReadError } from "./row-verifier.js";
import { PieceCutter, type ByteSource, type LongRow, type Piece } from "./piece-cutter.js";
import type { RowPool } from "./row-pool.js";
import { readPiece } from "./row-work.js";
import { PieceRows, walkPiece } from "./piece-rows.js";
import { checkNow } from "./signature-checker.js";
import { DEFAULT_SPLIT, rowBudget, windowOf, type SplitTuning } from "./split-tuning.js";
import type { PieceReply } from "./row-worker.js";
import { ChainWalk, type WalkOptions } from "./walk.js";
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
  const answers = new PieceRows();
  const walk = new ChainWalk(options, answers);
  const cutter = new PieceCutter(source, tuning.pieceBytes, limit, onRead);
  const window = windowOf(tuning, pool.size);
  const out: Promise<Part>[] = [];
  let reading = true;
  let rows = 0;
  // A thread that fails on a piece (a hostile record can exhaust its small heap, ADR 0027)
  // decides nothing: that piece is read again here, by the same readPiece. So every promise
  // out resolves, and none is left rejected behind the one awaited.
  const send = (part: Piece | LongRow): Promise<Part> => {
    if (part.code === "long") return Promise.resolve(part);
    const budget = rowBudget(tuning, part.length);
    return pool.read({ bytes: part.bytes, length: part.length, limit, hint: part.hint, budget }).then(
      (reply): Part => ({ code: "read", reply, piece: part }),
      () => readHere(source, part, limit, budget),
    );
  };
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
    let part: Part;
    try {
      part = await next;
    } catch (error) {
      throw new RecordReadError(name, error);
    }
    if (part.code === "long") {
      walk.step({ ...part.row, number: ++rows });
    } else {
      const piece = new Uint8Array(part.reply.bytes, 0, part.piece.length);
      const budget = rowBudget(tuning, part.piece.length);
      // Where the thread stopped at its budget, the rest is read here, its signatures checked now.
      const rest = (bytes: Uint8Array, hint: string | undefined) => readPiece(bytes, limit, hint, budget, checkNow);
      rows = walkPiece(walk, answers, piece, part.piece.offset, part.reply.answer, rows, limit, options.onLine !== undefined, rest);
      cutter.give(part.reply.bytes);
    }
    // The first Tampered ends the walk: the rest of the record is not read.
    if (walk.done) break;
  }
  // Pieces still out are left to finish; their answers are not needed.
  for (const left of out) left.catch(() => undefined);
  return walk.finish();
}

/** Read a piece on this thread, its bytes read again from the record: what its thread would have answered. */
async function readHere(source: ByteSource, piece: Piece, limit: number, budget: number): Promise<Part> {
  const bytes = new ArrayBuffer(piece.length);
  const buffer = Buffer.from(bytes);
  let got = 0;
  while (got < piece.length) {
    const n = await source.readAt(buffer.subarray(got), piece.offset + got);
    if (n === 0) throw new Error(`the record ended at byte ${piece.offset + got}, inside a piece read before: it changed while it was verified`);
    got += n;
  }
  return { code: "read", reply: { id: -1, bytes, answer: readPiece(buffer, limit, piece.hint, budget, checkNow) }, piece };
}
