import { messageOf } from "../durable/sync.js";
import { MAX_ROW_BYTES, RowSplitter, readRows, streamRows, type Row } from "../wire/row-splitter.js";
import { ChainWalk, type WalkOptions } from "./walk.js";
import type { Verification } from "./verdict.js";

/** How to verify: the trust set and per-Line callback of a walk, plus progress and the row bound. */
export interface VerifyOptions extends WalkOptions {
  /** Called with the number of bytes read so far, every 4 MiB or so. */
  readonly onProgress?: (bytesRead: number) => void;
  /** The row bound; defaults to {@link MAX_ROW_BYTES}. */
  readonly maxRowBytes?: number;
}

/** The file could not be read: a different answer from any verdict (exit 2 in the CLI). */
export class ChainReadError extends Error {
  /** `"ChainReadError"`, the name a stack trace and `String(error)` show. */
  override readonly name = "ChainReadError";
  constructor(
    /** The file that could not be read, or the name given to the stream that failed. */
    readonly path: string,
    /** The error the file system or the stream raised. */
    override readonly cause: unknown,
  ) {
    super(`read ${path}: ${messageOf(cause)}`);
  }
}

/**
 * Verify a record file in one streaming pass (SPEC §8). Memory does not grow with the
 * file: one chunk and one row are held at a time. Deterministic: same bytes, same result.
 *
 * @throws ChainReadError when the file cannot be opened or read.
 */
export async function verifyChainFile(path: string, options: VerifyOptions = {}): Promise<Verification> {
  return walkRows(readRows(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), path, options);
}

/**
 * {@link verifyChainFile} over a stream of bytes (standard input, a socket, a download),
 * read as it comes: memory does not grow with it. `name` names it in a ChainReadError.
 *
 * @throws ChainReadError when the stream fails.
 */
export async function verifyChainStream(source: AsyncIterable<Uint8Array>, name: string, options: VerifyOptions = {}): Promise<Verification> {
  return walkRows(streamRows(source, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), name, options);
}

function progressOf(options: VerifyOptions): (bytes: number) => void {
  let reported = 0;
  return (bytes) => {
    if (options.onProgress !== undefined && bytes - reported >= 1 << 22) {
      reported = bytes;
      options.onProgress(bytes);
    }
  };
}

async function walkRows(rows: AsyncGenerator<Row>, name: string, options: VerifyOptions): Promise<Verification> {
  const walk = new ChainWalk(options);
  try {
    for (;;) {
      let next: IteratorResult<Row>;
      try {
        next = await rows.next();
      } catch (error) {
        // Only the reading is "could not read": a fault in the walk is not the file's.
        throw new ChainReadError(name, error);
      }
      if (next.done === true) break;
      walk.step(next.value);
      // The first Tampered ends the walk: the rest of the file is not read.
      if (walk.done) break;
    }
  } finally {
    await rows.return(undefined);
  }
  return walk.finish();
}

/** Verify a record held in memory (tests, small inputs). */
export function verifyChainBytes(bytes: Uint8Array | string, options: VerifyOptions = {}): Verification {
  const walk = new ChainWalk(options);
  const splitter = new RowSplitter(options.maxRowBytes ?? MAX_ROW_BYTES);
  const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const row of splitter.push(buffer)) walk.step(row);
  for (const row of splitter.end()) walk.step(row);
  return walk.finish();
}
