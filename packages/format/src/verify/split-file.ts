import { open, type FileHandle } from "node:fs/promises";
import { openRegularFile } from "../durable/regular-file.js";
import { MAX_ROW_BYTES } from "../wire/row-splitter.js";
import type { ByteSource } from "./piece-cutter.js";
import { sharedRowPool } from "./row-pool.js";
import { RecordReadError, progressOf } from "./row-verifier.js";
import { splitWalk } from "./split-walk.js";
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
    return await splitWalk(source, path, options, sharedRowPool(threads), options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options), tuning);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
