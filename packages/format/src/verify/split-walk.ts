import { RecordReadError } from "./row-verifier.js";
import type { LongRow, Piece } from "./piece-cutter.js";
import type { PieceAnswer } from "./piece-answer.js";
import { readPiece } from "./row-work.js";
import { PieceRows, walkPiece } from "./piece-rows.js";
import { checkNow } from "./signature-checker.js";
import { DEFAULT_SPLIT, rowBudget, windowOf, type SplitTuning } from "./split-tuning.js";
import { ChainWalk, type WalkOptions } from "./walk.js";
import type { Verification } from "./verdict.js";

/**
 * The split walk (ADR 0027), the one piece driver of `aegis verify --threads N` and of the
 * report page (ADR 0028): readers (worker threads, or a page's Web Workers) split, parse,
 * canonicalize and hash each row and check its signature (row-work.ts); this thread takes the
 * record in pieces and walks the answers in file order through the sequential walk itself
 * (walk.ts), which decides everything order decides: the links, the Sessions, the caps, the
 * first failure. So the answer is the sequential walk's by construction (SPEC §8.2), and this
 * thread's own work per Line is a handful of comparisons. It names no Node API: where the
 * pieces come from and who reads them are the driver's caller's.
 *
 * Memory: at most `window` pieces are read and not yet walked, whatever the thread count:
 * the reader waits for the oldest (SPEC §13, memory flat in the record and in the threads).
 */

/** Where the pieces come from: a file read in pieces (split-file.ts), or a page's record as it arrives. */
export interface PieceSource {
  /** The next piece of whole rows, a row over the bound, or undefined at the end. */
  next(): Promise<Piece | LongRow | undefined>;
  /** A piece's buffer a reader handed back, to take a later piece in. */
  give(bytes: ArrayBuffer): void;
  /** The piece's bytes again, at the start of a buffer of their own: its reader failed on it. */
  reread(piece: Piece): Promise<ArrayBuffer>;
}

/** A piece to read: `length` bytes at the start of `bytes`, which is handed over and comes back with the answer. */
export interface PieceToRead {
  readonly bytes: ArrayBuffer;
  readonly length: number;
  readonly limit: number;
  /** The public key of the last `open` before the piece, as a cheap search found it (a guess). */
  readonly hint: string | undefined;
  /** Rows to read at most (row-work.ts): the rest of the piece is this thread's. */
  readonly budget: number;
}

/** Who reads pieces: `size` readers, each answering with the rows read and the buffer back. */
export interface PieceReader {
  readonly size: number;
  read(piece: PieceToRead): Promise<{ readonly bytes: ArrayBuffer; readonly answer: PieceAnswer }>;
}

/** What the split walk takes besides the walk's own options. */
export interface PieceWalk {
  readonly source: PieceSource;
  readonly reader: PieceReader;
  /** Names the record in a RecordReadError. */
  readonly name: string;
  /** The row bound (SPEC §13.1). */
  readonly limit: number;
  readonly tuning?: SplitTuning;
  /** Awaited after each piece walked, with the record's bytes walked so far (a page stays responsive). */
  readonly between?: (walked: number) => Promise<void>;
}

/** The verification, and how many signatures this thread checked because a reader's guess of key was wrong. */
export interface PiecesWalked {
  readonly verification: Verification;
  readonly checkedHere: number;
}

type Part = { readonly code: "read"; readonly bytes: ArrayBuffer; readonly answer: PieceAnswer; readonly piece: Piece } | LongRow;

/**
 * Walk the record `walk.source` brings, its pieces read by `walk.reader`.
 *
 * @throws RecordReadError when the record cannot be read.
 */
export async function walkPieces(walk: PieceWalk, options: WalkOptions): Promise<PiecesWalked> {
  const { source, reader, name, limit, between } = walk;
  const tuning = walk.tuning ?? DEFAULT_SPLIT;
  const answers = new PieceRows();
  const chain = new ChainWalk(options, answers);
  const window = windowOf(tuning, reader.size);
  const out: Promise<Part>[] = [];
  let reading = true;
  let rows = 0;
  // A reader that fails on a piece (a hostile record can exhaust a thread's small heap, ADR
  // 0027) decides nothing: that piece is read again here, by the same readPiece. Only a piece
  // that cannot be read again fails the walk (the record changed), and no piece left out is
  // then left rejected and unhandled (below).
  const send = (part: Piece | LongRow): Promise<Part> => {
    if (part.code === "long") return Promise.resolve(part);
    const budget = rowBudget(tuning, part.length);
    return reader.read({ bytes: part.bytes, length: part.length, limit, hint: part.hint, budget }).then(
      (reply): Part => ({ code: "read", bytes: reply.bytes, answer: reply.answer, piece: part }),
      async (): Promise<Part> => {
        const bytes = await source.reread(part);
        return { code: "read", bytes, answer: readPiece(new Uint8Array(bytes, 0, part.length), limit, part.hint, budget, checkNow), piece: part };
      },
    );
  };
  try {
    for (;;) {
      while (reading && out.length < window) {
        let part: Piece | LongRow | undefined;
        try {
          part = await source.next();
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
      if (part.code !== "read") {
        // A row over the bound ends the walk (SPEC §13.1): nothing after it is read.
        chain.step({ ...part.row, number: ++rows });
        break;
      }
      const piece = new Uint8Array(part.bytes, 0, part.piece.length);
      const budget = rowBudget(tuning, part.piece.length);
      // Where the reader stopped at its budget, the rest is read here, its signatures checked now.
      const rest = (bytes: Uint8Array, hint: string | undefined) => readPiece(bytes, limit, hint, budget, checkNow);
      rows = walkPiece(chain, answers, piece, part.piece.offset, part.answer, rows, limit, options.onLine !== undefined, rest);
      source.give(part.bytes);
      // The first Tampered ends the walk: the rest of the record is not read.
      if (chain.done) break;
      if (between !== undefined) await between(part.piece.offset + part.piece.length);
    }
  } finally {
    // Pieces still out are left to finish, their answers (or failures) not needed.
    for (const left of out) left.catch(() => undefined);
  }
  return { verification: chain.finish(), checkedHere: answers.madeHere };
}
