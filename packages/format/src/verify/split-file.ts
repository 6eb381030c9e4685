import { open, type FileHandle } from "node:fs/promises";
import { openRegularFile } from "../durable/regular-file.js";
import { MAX_ROW_BYTES } from "../wire/row-splitter.js";
import { PieceCutter, type ByteSource, type Piece } from "./piece-cutter.js";
import { sharedRowPool } from "./row-pool.js";
import { RecordReadError, progressOf } from "./row-verifier.js";
import { walkPieces, type PieceReader, type PieceSource } from "./split-walk.js";
import { DEFAULT_SPLIT, type SplitTuning } from "./split-tuning.js";
import type { Verification } from "./verdict.js";
import type { VerifyOptions } from "./verify-options.js";

/**
 * A record this large is read by the split walk (ADR 0027) when threads are asked for:
 * below it, starting the threads costs more than they save, and the walk of row-verifier.ts
 * (signatures only on threads, after its first few thousand) is kept.
 */
const SPLIT_MIN_BYTES = 4 << 20;

/** True when a record of `size` bytes (undefined: not a regular file) is verified by the split walk on `threads` threads. */
export function splits(size: number | undefined, threads: number): boolean {
  return threads > 0 && size !== undefined && (size >= SPLIT_MIN_BYTES || sharedRowPool(threads).running);
}

/**
 * Verify a record file by the split walk on `threads` threads. With `regularOnly`, a path
 * that is not a regular file is refused (SPEC §18), as readRowChunks refuses it.
 *
 * @throws RecordReadError when the file cannot be opened or read.
 */
export async function verifySplitFile(
  path: string,
  options: VerifyOptions,
  threads: number,
  regularOnly = false,
  tuning: SplitTuning = DEFAULT_SPLIT,
): Promise<Verification> {
  let handle: FileHandle;
  try {
    handle = regularOnly ? await openRegularFile(path) : await open(path, "r");
  } catch (error) {
    throw new RecordReadError(path, error);
  }
  // Read from the current position, as readRowChunks does.
  const source: ByteSource = {
    read: async (into) => (await handle.read(into, 0, into.length, null)).bytesRead,
    readAt: async (into, position) => (await handle.read(into, 0, into.length, position)).bytesRead,
  };
  try {
    return await splitWalkOf(source, path, options, sharedRowPool(threads), tuning);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The split walk of the record `source` reads, its pieces read by `reader`. `name` names it in a RecordReadError. */
export async function splitWalkOf(source: ByteSource, name: string, options: VerifyOptions, reader: PieceReader, tuning: SplitTuning): Promise<Verification> {
  const limit = options.maxRowBytes ?? MAX_ROW_BYTES;
  const pieces = new FilePieces(source, new PieceCutter(source, tuning.pieceBytes, limit, progressOf(options)));
  return (await walkPieces({ source: pieces, reader, name, limit, tuning }, options)).verification;
}

/** A file's pieces, as the cutter reads them; a piece read again comes from the file again. */
class FilePieces implements PieceSource {
  constructor(
    private readonly source: ByteSource,
    private readonly cutter: PieceCutter,
  ) {}

  next(): ReturnType<PieceCutter["next"]> {
    return this.cutter.next();
  }

  give(bytes: ArrayBuffer): void {
    this.cutter.give(bytes);
  }

  async reread(piece: Piece): Promise<ArrayBuffer> {
    const bytes = new ArrayBuffer(piece.length);
    const buffer = Buffer.from(bytes);
    let got = 0;
    while (got < piece.length) {
      const n = await this.source.readAt(buffer.subarray(got), piece.offset + got);
      if (n === 0) throw new Error(`the record ended at byte ${piece.offset + got}, inside a piece read before: it changed while it was verified`);
      got += n;
    }
    return bytes;
  }
}
