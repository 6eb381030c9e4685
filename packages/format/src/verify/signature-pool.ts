import { availableParallelism } from "node:os";
import type { SignatureBatch } from "./signature-batch.js";
import type { BatchAnswer, BatchRequest } from "./signature-worker.js";
import { WorkerPool } from "./worker-pool.js";

/** Worker threads that check Ed25519 signatures in batches (signature-worker.ts). */
export class SignaturePool {
  private readonly pool: WorkerPool<BatchRequest, BatchAnswer>;

  constructor(readonly size: number) {
    this.pool = new WorkerPool("signature", size);
  }

  /** Starts the threads, if they are not running; they take tens of milliseconds to be ready. */
  start(): void {
    this.pool.start();
  }

  /** True once every thread runs and can take a batch at once. */
  get ready(): boolean {
    return this.pool.ready;
  }

  /** The index of the batch's first signature that does not verify, or -1. */
  async check(batch: SignatureBatch): Promise<number> {
    const encoded = batch.encode();
    return (await this.pool.send((id) => ({ id, batch: encoded }), [encoded.bytes])).failed;
  }

  /** Stops every thread; a later batch starts new ones. */
  close(): Promise<void> {
    return this.pool.close();
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
