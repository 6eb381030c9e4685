import { stat } from "node:fs/promises";
import { tuningFor, type CheckPool, type Tuning } from "./deferred-checks.js";
import { defaultThreads, sharedPool } from "./signature-pool.js";
import type { VerifyOptions } from "./verify-options.js";

// What every driver asks before it walks: how many threads check signatures, and how soon they
// start. Shared by the drivers so that none of them imports another.

/**
 * The threads `options.threads` asks for: one per core by default.
 *
 * @throws RangeError when `threads` is not a whole number of at least 0.
 */
export function threadsOf(options: VerifyOptions): number {
  const threads = options.threads ?? defaultThreads();
  if (!Number.isSafeInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number of at least 0, got ${threads}`);
  return threads;
}

/**
 * The pool of the threads `options.threads` asks for (one per core by default), or none for 0.
 *
 * @throws RangeError when `threads` is not a whole number of at least 0.
 */
export function poolFor(options: VerifyOptions): CheckPool | undefined {
  const threads = threadsOf(options);
  return threads === 0 ? undefined : sharedPool(threads);
}

/** The size of a regular file; undefined for anything else, or a path that cannot be stat'ed (the read says why). */
export async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then(
    (info) => (info.isFile() ? info.size : undefined),
    () => undefined,
  );
}

/** A large file's threads are started at once; a stream's only once it proves long. */
export async function tuningOfFile(path: string): Promise<Tuning> {
  return tuningFor(await sizeOf(path));
}
