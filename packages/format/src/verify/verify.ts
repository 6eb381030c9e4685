import { MAX_ROW_BYTES, RowSplitter, streamRowChunks } from "../wire/row-splitter.js";
import { readRowChunks } from "../wire/row-file.js";
import { ChainWalk } from "./walk.js";
import { stat } from "node:fs/promises";
import { tuningFor, type CheckPool, type Tuning } from "./deferred-checks.js";
import { defaultThreads, sharedPool } from "./signature-pool.js";
import type { Verification } from "./verdict.js";
import type { VerifyOptions } from "./verify-options.js";
import { progressOf, walkRows } from "./row-verifier.js";
import { splits, verifySplitFile } from "./split-file.js";

export { RecordReadError } from "./row-verifier.js";
export type { VerifyOptions } from "./verify-options.js";

/**
 * Verify a record file in one streaming pass (SPEC §8). Memory does not grow with the
 * file: one chunk and one row are held at a time. Deterministic: same bytes, same result.
 *
 * @throws RecordReadError when the file cannot be opened or read.
 */
export async function verifyChainFile(path: string, options: VerifyOptions = {}): Promise<Verification> {
  const threads = threadsOf(options);
  // Stat'ed once: the size both chooses the walk and tunes it.
  const size = await sizeOf(path);
  if (splits(size, threads)) return verifySplitFile(path, options, threads);
  return walkRows(readRowChunks(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), path, options, poolFor(options), tuningFor(size));
}

/**
 * {@link verifyChainFile} for a file found by walking a directory rather than named by a
 * user: one that is not a regular file when it is opened (a FIFO put in its place) is
 * refused with a RecordReadError, never waited on (SPEC §18).
 */
export async function verifyFoundChainFile(path: string, options: VerifyOptions = {}): Promise<Verification> {
  const threads = threadsOf(options);
  const size = await sizeOf(path);
  if (splits(size, threads)) return verifySplitFile(path, options, threads, true);
  return walkRows(readRowChunks(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options), true), path, options, poolFor(options), tuningFor(size));
}

/**
 * The threads `options.threads` asks for (one per core by default), or none for 0.
 *
 * @throws RangeError when `threads` is not a whole number of at least 0.
 */
export function poolFor(options: VerifyOptions): CheckPool | undefined {
  const threads = threadsOf(options);
  return threads === 0 ? undefined : sharedPool(threads);
}

/**
 * The threads `options.threads` asks for: one per core by default.
 *
 * @throws RangeError when `threads` is not a whole number of at least 0.
 */
function threadsOf(options: VerifyOptions): number {
  const threads = options.threads ?? defaultThreads();
  if (!Number.isSafeInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number of at least 0, got ${threads}`);
  return threads;
}

/** The size of a regular file; undefined for anything else, or a path that cannot be stat'ed (the read says why). */
async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then(
    (info) => (info.isFile() ? info.size : undefined),
    () => undefined,
  );
}

/** A large file's threads are started at once; a stream's only once it proves long. */
export async function tuningOfFile(path: string): Promise<Tuning> {
  return tuningFor(await sizeOf(path));
}

/**
 * {@link verifyChainFile} over a stream of bytes (standard input, a socket, a download),
 * read as it comes: memory does not grow with it. `name` names it in a RecordReadError.
 *
 * @throws RecordReadError when the stream fails.
 */
export async function verifyChainStream(source: AsyncIterable<Uint8Array>, name: string, options: VerifyOptions = {}): Promise<Verification> {
  return walkRows(streamRowChunks(source, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), name, options, poolFor(options));
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
