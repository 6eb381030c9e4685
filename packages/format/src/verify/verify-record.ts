import { sizeOf, threadsOf } from "./check-pool.js";
import { verifyChainBytes, verifyChainStream, verifyWholeFile } from "./one-pass.js";
import { splits, verifySplitFile } from "./split-file.js";
import type { Verification } from "./verdict.js";
import type { VerifyOptions } from "./verify-options.js";

// The one way in to verifying a record: it chooses the driver (one pass, or a file split
// across threads), and the drivers never call each other.

/**
 * Where a record to verify comes from: a file, bytes in memory, or a stream of its bytes (a
 * socket, an HTTP body, an object store). `name` is what a verdict calls a source without a
 * path.
 */
export type RecordSource =
  | { readonly path: string }
  | { readonly bytes: Uint8Array | string; readonly name?: string }
  | { readonly lines: AsyncIterable<Uint8Array>; readonly name: string };

/**
 * Verify a record in one streaming pass (SPEC §8), wherever it comes from. Memory does not grow
 * with the record: one chunk and one row are held at a time (bytes in memory are already held).
 * Deterministic: the same bytes give the same verdict, reason and position from every source.
 *
 * @example
 * ```ts
 * const { verdict } = await verifyRecord({ path: "session.aarl" }, { trust: [publicKeyHex] });
 * ```
 *
 * @throws RecordReadError when a file cannot be opened or read, or a stream fails.
 */
export async function verifyRecord(source: RecordSource, options: VerifyOptions = {}): Promise<Verification> {
  if ("path" in source) return verifyChainFile(source.path, options);
  if ("bytes" in source) return verifyChainBytes(source.bytes, options);
  return verifyChainStream(source.lines, source.name, options);
}

/**
 * Verify a record file: split across threads when it is large and threads are given, else in
 * one pass. Memory does not grow with the file. Deterministic: same bytes, same result.
 *
 * @throws RecordReadError when the file cannot be opened or read.
 */
export async function verifyChainFile(path: string, options: VerifyOptions = {}): Promise<Verification> {
  return verifyFile(path, options, false);
}

/**
 * {@link verifyChainFile} for a file found by walking a directory rather than named by a
 * user: one that is not a regular file when it is opened (a FIFO put in its place) is
 * refused with a RecordReadError, never waited on (SPEC §18).
 */
export async function verifyFoundChainFile(path: string, options: VerifyOptions = {}): Promise<Verification> {
  return verifyFile(path, options, true);
}

async function verifyFile(path: string, options: VerifyOptions, regularOnly: boolean): Promise<Verification> {
  const threads = threadsOf(options);
  // Stat'ed once: the size both chooses the driver and tunes it.
  const size = await sizeOf(path);
  if (splits(size, threads)) return verifySplitFile(path, options, threads, regularOnly);
  return verifyWholeFile(path, options, size, regularOnly);
}
