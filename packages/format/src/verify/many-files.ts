import { describeIoError } from "../durable/io-text.js";
import { defaultThreads } from "./signature-pool.js";
import { RecordReadError } from "./row-verifier.js";
import { verifyChainFile, verifyFoundChainFile } from "./verify-record.js";
import type { FileAnswer, FileRequest, FileVerification } from "./file-messages.js";
import { WorkerPool } from "./worker-pool.js";

export type { FileVerification } from "./file-messages.js";

/** How {@link verifyRecordFiles} verifies: the trust set of every file, and how many files at once. */
export interface ManyFilesOptions {
  /** Public keys (64 lowercase hex) every file's `open` Lines must be signed by (SPEC §8.4); absent: unpinned. */
  readonly trust?: readonly string[];
  /** Files verified at once, each on a worker thread; defaults to one per core. 0: one after another, on this thread. */
  readonly threads?: number;
  /**
   * Which paths must be regular files: those found by walking a directory, which no one named
   * as a pipe. Such a path that is a FIFO, socket, device or directory when it is opened is
   * answered `unreadable` (`not a regular file (...)`) at once, never waited on (SPEC §18).
   * Others are read as `verifyRecord` reads them, a named pipe included. Default: none.
   */
  readonly regularOnly?: (path: string) => boolean;
}

/**
 * Verify many record files (a fleet's, one machine's share of them), several at once: each
 * file is walked start to end on a thread of its own, exactly as `verifyRecord`
 * walks it. Answers come in the order of `paths`; a file that cannot be read is an answer,
 * not an error. At most a few files per thread are ahead of the one awaited, so memory
 * stays flat for any number of files.
 *
 * @throws only for a fault that is not the files' (a thread that fails).
 */
export async function* verifyRecordFiles(paths: Iterable<string>, options: ManyFilesOptions = {}): AsyncGenerator<FileVerification> {
  const threads = options.threads ?? defaultThreads();
  if (!Number.isSafeInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number of at least 0, got ${threads}`);
  if (threads === 0) {
    for (const path of paths) yield await verifyHere(path, options.trust, options.regularOnly?.(path) === true);
    return;
  }
  const pool = new FilePool(threads, options.trust, options.regularOnly);
  const ahead = 4 * threads;
  const queue: Promise<FileVerification>[] = [];
  try {
    for (const path of paths) {
      const answer = pool.verify(path);
      // Awaited in turn below; until then a failed thread's rejection must not go unhandled
      // (nor after a reader that stops early closes the pool).
      answer.catch(() => undefined);
      queue.push(answer);
      if (queue.length >= ahead) {
        const next = queue.shift();
        if (next !== undefined) yield await next;
      }
    }
    for (const next of queue) yield await next;
  } finally {
    await pool.close();
  }
}

async function verifyHere(path: string, trust: readonly string[] | undefined, regularOnly: boolean): Promise<FileVerification> {
  try {
    const options = { threads: 0, ...(trust === undefined ? {} : { trust }) };
    return { code: "checked", path, verification: await (regularOnly ? verifyFoundChainFile(path, options) : verifyChainFile(path, options)) };
  } catch (error) {
    if (error instanceof RecordReadError) return { code: "unreadable", path, detail: describeIoError(error.cause) };
    throw error;
  }
}

/** The file threads of one `verifyRecordFiles`: started as files come, up to `size`, and closed when it ends. */
class FilePool {
  private readonly pool: WorkerPool<FileRequest, FileAnswer>;

  constructor(
    size: number,
    private readonly trust: readonly string[] | undefined,
    private readonly regularOnly: ((path: string) => boolean) | undefined,
  ) {
    this.pool = new WorkerPool("file", size, { grow: true });
  }

  async verify(path: string): Promise<FileVerification> {
    const answer = await this.pool.send((id) => ({ id, path, trust: this.trust, regularOnly: this.regularOnly?.(path) === true }));
    if ("result" in answer) return answer.result;
    throw new Error(`verifying a file failed on its thread: ${answer.failure}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
