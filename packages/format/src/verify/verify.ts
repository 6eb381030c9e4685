import { messageOf } from "../durable/sync.js";
import { MAX_ROW_BYTES, RowSplitter, readRowChunks, streamRowChunks, type Row } from "../wire/row-splitter.js";
import { ChainWalk, type WalkOptions } from "./walk.js";
import { stat } from "node:fs/promises";
import { DEFAULT_TUNING, DeferredChecks, tuningFor, type Tuning } from "./deferred-checks.js";
import { defaultThreads, sharedPool } from "./signature-pool.js";
import type { Verification } from "./verdict.js";
import type { JsonValue } from "../wire/json.js";

/** How to verify: the trust set and per-Line callback of a walk, plus progress and the row bound. */
export interface VerifyOptions extends WalkOptions {
  /** Called with the number of bytes read so far, every 4 MiB or so. */
  readonly onProgress?: (bytesRead: number) => void;
  /** The row bound; defaults to {@link MAX_ROW_BYTES}. */
  readonly maxRowBytes?: number;
  /**
   * How many worker threads check signatures while the walk goes on (SPEC §8 is unchanged:
   * the verdict, reason and position are the sequential walk's). Defaults to one per core
   * (`os.availableParallelism()`); 0 checks every signature on the calling thread, for
   * environments without worker threads. A small record never starts the threads.
   */
  readonly threads?: number;
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
  return walkRows(readRowChunks(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), path, options, await tuningOfFile(path));
}

/** A large file's threads are started at once; a stream's only once it proves long. */
export async function tuningOfFile(path: string): Promise<Tuning> {
  const size = await stat(path).then(
    (info) => (info.isFile() ? info.size : undefined),
    () => undefined,
  );
  return tuningFor(size);
}

/** `verifyChainFile`, tuned: tests send a file's checks to the threads from the first. */
export async function verifyChainFileTuned(path: string, options: VerifyOptions, tuning: Tuning): Promise<Verification> {
  return walkRows(readRowChunks(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), path, options, tuning);
}

/**
 * {@link verifyChainFile} over a stream of bytes (standard input, a socket, a download),
 * read as it comes: memory does not grow with it. `name` names it in a ChainReadError.
 *
 * @throws ChainReadError when the stream fails.
 */
export async function verifyChainStream(source: AsyncIterable<Uint8Array>, name: string, options: VerifyOptions = {}): Promise<Verification> {
  return walkRows(streamRowChunks(source, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), name, options);
}

export function progressOf(options: VerifyOptions): (bytes: number) => void {
  let reported = 0;
  return (bytes) => {
    if (options.onProgress !== undefined && bytes - reported >= 1 << 22) {
      reported = bytes;
      options.onProgress(bytes);
    }
  };
}

async function walkRows(
  chunks: AsyncGenerator<readonly Row[]> | Generator<readonly Row[]>,
  name: string,
  options: VerifyOptions,
  tuning = DEFAULT_TUNING,
): Promise<Verification> {
  const verifier = new RowVerifier(options, tuning);
  try {
    for (;;) {
      const rows = await nextRows(chunks, name);
      if (rows === undefined) break;
      for (const row of rows) {
        const wait = verifier.step(row);
        if (wait !== undefined) await wait;
        // The first Tampered ends the walk: the rest of the file is not read.
        if (verifier.done) break;
      }
      if (verifier.done) break;
    }
  } finally {
    await chunks.return(undefined);
  }
  return verifier.finish();
}

/**
 * The next read's rows, or undefined at the end. Only the reading is "could not read"
 * (a ChainReadError): a fault in the walk is not the file's.
 */
export async function nextRows(chunks: AsyncGenerator<readonly Row[]> | Generator<readonly Row[]>, name: string): Promise<readonly Row[] | undefined> {
  let next: IteratorResult<readonly Row[]>;
  try {
    next = await chunks.next();
  } catch (error) {
    throw new ChainReadError(name, error);
  }
  return next.done === true ? undefined : next.value;
}

/**
 * The verifier fed one row at a time, by whoever reads them: the walk on this thread, and
 * its signature checks on the pool's threads unless `threads` is 0.
 */
export class RowVerifier {
  private readonly walk: ChainWalk;
  private readonly checks: DeferredChecks | undefined;

  constructor(options: VerifyOptions, tuning: Tuning = DEFAULT_TUNING) {
    const threads = options.threads ?? defaultThreads();
    if (!Number.isSafeInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number of at least 0, got ${threads}`);
    this.checks = threads === 0 ? undefined : new DeferredChecks(sharedPool(threads), options.onLine, tuning);
    // The checks hold each Line for `onLine` until the signatures before it have passed.
    const walkOptions = this.checks === undefined || options.onLine === undefined ? options : { ...options, onLine: this.checks.line };
    this.walk = new ChainWalk(walkOptions, this.checks);
  }

  /** True once no later row can change the answer. */
  get done(): boolean {
    return this.walk.done || this.checks?.failure !== undefined;
  }

  /** The value the walk parsed from the row it was last given, if it parsed one (recheck reads it again otherwise). */
  get lastValue(): JsonValue | undefined {
    return this.walk.lastValue;
  }

  /**
   * Walk one row. A promise comes back only when the signature threads are a full window
   * behind: wait for it before the next row, so memory stays flat.
   */
  step(row: Row): Promise<void> | undefined {
    if (this.done) {
      this.walk.lastValue = undefined;
      return undefined;
    }
    this.walk.step(row);
    return this.checks?.pace();
  }

  /** The result, once the last row has been stepped (or the walk is done). */
  async finish(): Promise<Verification> {
    if (this.checks === undefined) return this.walk.finish();
    await this.checks.finish();
    return this.checks.failure === undefined ? this.walk.finish() : this.walk.finishAt(this.checks.failure);
  }
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

/**
 * `verifyChainBytes` through the parallel walk, tuned: tests set `inline` to 0 and a
 * small `batch`, so that a small record's checks go to the threads in many batches.
 */
export async function verifyChainBytesParallel(bytes: Uint8Array | string, options: VerifyOptions, tuning: Tuning): Promise<Verification> {
  const splitter = new RowSplitter(options.maxRowBytes ?? MAX_ROW_BYTES);
  const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  function* rows(): Generator<readonly Row[]> {
    yield [...splitter.push(buffer)];
    yield [...splitter.end()];
  }
  return walkRows(rows(), "bytes", options, tuning);
}
