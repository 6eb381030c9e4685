import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import type { PieceReply, PieceRequest } from "./row-worker.js";
import { startWorker } from "./worker-url.js";

/**
 * Worker threads that read pieces of a record (row-worker.ts) for the split walk
 * (split-walk.ts). Like the signature pool, threads start on the first piece, stay for the
 * next verification, and never keep the process alive while idle.
 *
 * Each thread's young generation is held small: a thread's garbage is a piece's rows, and
 * V8's default lets each isolate grow tens of MiB before it collects, which is what made
 * memory grow with the thread count (issue 31, ADR 0027).
 */
const ROW_THREAD_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 32 } as const;

/** A piece to read: `length` bytes at the start of `bytes`, which is handed over and comes back with the answer. */
export type PieceToRead = Omit<PieceRequest, "id">;

export class RowPool {
  private threads: RowThread[] = [];
  private nextId = 0;

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`a row pool has at least one thread, got ${size}`);
  }

  /** True once threads have been started (by an earlier verification, or this one). */
  get running(): boolean {
    return this.threads.length > 0;
  }

  /** Read a piece on the least loaded thread. */
  read(piece: PieceToRead): Promise<PieceReply> {
    if (this.threads.length === 0) this.threads = Array.from({ length: this.size }, () => new RowThread(() => void this.close()));
    let thread = this.threads[0];
    for (const t of this.threads) if (thread === undefined || t.load < thread.load) thread = t;
    if (thread === undefined) throw new Error("row pool has no thread");
    return thread.send({ ...piece, id: this.nextId++ });
  }

  /** Stops every thread; a later piece starts new ones. */
  async close(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => t.stop()));
  }
}

class RowThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (reply: PieceReply) => void; reject: (error: unknown) => void }>();

  constructor(onFailure: () => void) {
    this.worker = startWorker("row", { resourceLimits: ROW_THREAD_LIMITS });
    this.worker.on("message", (reply: PieceReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      waiting?.resolve(reply);
    });
    const fail = (error: unknown): void => {
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
      onFailure();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => {
      if (this.pending.size > 0) fail(new Error(`a row thread exited (code ${code}) with pieces outstanding`));
    });
    // After the listeners: adding a "message" listener refs the worker again.
    this.worker.unref();
  }

  get load(): number {
    return this.pending.size;
  }

  send(request: PieceRequest): Promise<PieceReply> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(request.id, { resolve, reject });
      this.worker.postMessage(request, [request.bytes]);
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

const pools = new Map<number, RowPool>();

/**
 * The row pool this process shares for `threads` threads: no more threads than cores this
 * process may use. A thread beyond them reads nothing sooner, and each is an isolate of
 * its own, some 8 MiB before it reads a byte: memory would grow with `--threads` for no
 * gain (issue 31, ADR 0027).
 */
export function sharedRowPool(threads: number, cores: number = availableParallelism()): RowPool {
  return rowPoolOf(Math.max(1, Math.min(threads, cores)));
}

/** The row pool of exactly `threads` threads (tests). */
function rowPoolOf(threads: number): RowPool {
  let pool = pools.get(threads);
  if (pool === undefined) {
    pool = new RowPool(threads);
    pools.set(threads, pool);
  }
  return pool;
}
