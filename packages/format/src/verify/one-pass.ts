import { MAX_ROW_BYTES, RowSplitter, streamRowChunks } from "../wire/row-splitter.js";
import { readRowChunks } from "../wire/row-file.js";
import { ChainWalk } from "./walk.js";
import { tuningFor } from "./deferred-checks.js";
import { poolFor } from "./check-pool.js";
import type { Verification } from "./verdict.js";
import type { VerifyOptions } from "./verify-options.js";
import { progressOf, walkRows } from "./row-verifier.js";

// The driver that reads a record once, start to end, on this thread, the signatures checked
// by the pool beside it (SPEC §8): a file, a stream, or bytes in memory. Memory does not grow
// with the record: one chunk and one row are held at a time.

/**
 * A file of `size` bytes (undefined: not known) walked whole. `regularOnly`: a file found by
 * walking a directory, refused unless it is a regular file when it is opened (SPEC §18).
 *
 * @throws RecordReadError when the file cannot be opened or read.
 */
export function verifyWholeFile(path: string, options: VerifyOptions, size: number | undefined, regularOnly = false): Promise<Verification> {
  const chunks = readRowChunks(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options), regularOnly);
  return walkRows(chunks, path, options, poolFor(options), tuningFor(size));
}

/**
 * A stream of a record's bytes (standard input, a socket, a download), read as it comes.
 * `name` names it in a RecordReadError.
 *
 * @throws RecordReadError when the stream fails.
 */
export async function verifyChainStream(source: AsyncIterable<Uint8Array>, name: string, options: VerifyOptions = {}): Promise<Verification> {
  return walkRows(streamRowChunks(source, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), name, options, poolFor(options));
}

/** A record held in memory (tests, small inputs), verified on this thread alone. */
export function verifyChainBytes(bytes: Uint8Array | string, options: VerifyOptions = {}): Verification {
  const walk = new ChainWalk(options);
  const splitter = new RowSplitter(options.maxRowBytes ?? MAX_ROW_BYTES);
  const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const row of splitter.push(buffer)) walk.step(row);
  for (const row of splitter.end()) walk.step(row);
  return walk.finish();
}
