import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import type { SignatureBatch } from "./signature-batch.js";
import type { BatchAnswer, BatchRequest } from "./signature-worker.js";
import { startWorker } from "./worker-url.js";

/**
 * Worker threads that check Ed25519 signatures in batches. Threads start on the first
 * batch and stay for the next verification (a fleet's files are verified one after
 * another); they never keep the process alive while idle.
 */
export class SignaturePool {
  private threads: PoolThread[] = [];
  private nextId = 0;

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`a signature pool has at least one thread, got ${size}`);
  }

  /** Starts the threads, if they are not running; they take tens of milliseconds to be ready. */
  start(): void {
    if (this.threads.length === 0) this.threads = Array.from({ length: this.size }, () => new PoolThread(() => this.forget()));
  }

  /** True once every thread runs and can take a batch at once. */
  get ready(): boolean {
    return this.threads.length > 0 && this.threads.every((t) => t.online);
  }

  /** The index of the batch's first signature that does not verify, or -1. */
  check(batch: SignatureBatch): Promise<number> {
    this.start();
    let thread = this.threads[0];
    for (const t of this.threads) if (thread === undefined || t.load < thread.load) thread = t;
    if (thread === undefined) throw new Error("signature pool has no thread");
    return thread.send(this.nextId++, batch);
  }

  /** Stops every thread; a later batch starts new ones. */
  async close(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => t.stop()));
  }

  private forget(): void {
    // A thread that failed takes the pool down with it; the next batch starts afresh.
    void this.close();
  }
}

class PoolThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (failed: number) => void; reject: (error: unknown) => void }>();

  online = false;

  constructor(onFailure: () => void) {
    this.worker = startWorker("signature");
    this.worker.once("online", () => {
      this.online = true;
    });
    this.worker.on("message", (answer: BatchAnswer) => {
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) this.worker.unref();
      waiting?.resolve(answer.failed);
    });
    const fail = (error: unknown): void => {
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
      onFailure();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => {
      if (this.pending.size > 0) fail(new Error(`a signature thread exited (code ${code}) with checks outstanding`));
    });
    // After the listeners: adding a "message" listener refs the worker again.
    this.worker.unref();
  }

  get load(): number {
    return this.pending.size;
  }

  send(id: number, batch: SignatureBatch): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      const encoded = batch.encode();
      const request: BatchRequest = { id, batch: encoded };
      this.worker.postMessage(request, [encoded.bytes]);
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

const pools = new Map<number, SignaturePool>();

/** The pool of `threads` threads this process shares. */
export function sharedPool(threads: number): SignaturePool {
  let pool = pools.get(threads);
  if (pool === undefined) {
    pool = new SignaturePool(threads);
    pools.set(threads, pool);
  }
  return pool;
}

/** How many threads check signatures by default: one per core this process may use. */
export function defaultThreads(): number {
  return availableParallelism();
}
