import { availableParallelism } from "node:os";
import type { PieceReply, PieceRequest } from "./row-worker.js";
import type { PieceReader, PieceToRead } from "./split-walk.js";
import { WorkerPool } from "./worker-pool.js";

/**
 * Worker threads that read pieces of a record (row-worker.ts) for the split walk
 * (split-walk.ts).
 */

/**
 * What the row threads' young generations may hold together (ADR 0046). A thread's garbage
 * is a piece's rows: V8's default lets each isolate grow tens of MiB before it collects,
 * which is what made memory grow with the thread count (issue 31, ADR 0027). Shared, the
 * bound stays flat in the thread count; a thread held at 2 MiB on two cores spent some 4%
 * of its time collecting, at 8 MiB under 2% (docs/benchmarks.md).
 */
const YOUNG_BUDGET_MIB = 16;

/** Each row thread's heap bounds when `threads` of them run: the young generation a share of the budget, 2 to 8 MiB. */
export function rowThreadLimits(threads: number): { readonly maxYoungGenerationSizeMb: number; readonly maxOldGenerationSizeMb: number } {
  return { maxYoungGenerationSizeMb: Math.min(8, Math.max(2, Math.floor(YOUNG_BUDGET_MIB / threads))), maxOldGenerationSizeMb: 32 };
}

/** The split walk's piece reader (split-walk.ts) on worker threads. */
export class RowPool implements PieceReader {
  private readonly pool: WorkerPool<PieceRequest, PieceReply>;

  constructor(readonly size: number) {
    this.pool = new WorkerPool("row", size, { resourceLimits: rowThreadLimits(size) });
  }

  /** True once threads have been started (by an earlier verification, or this one). */
  get running(): boolean {
    return this.pool.running;
  }

  /** Read a piece on the least loaded thread. */
  read(piece: PieceToRead): Promise<PieceReply> {
    return this.pool.send((id) => ({ ...piece, id }), [piece.bytes]);
  }

  /** Stops every thread; a later piece starts new ones. */
  close(): Promise<void> {
    return this.pool.close();
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
  const size = Math.max(1, Math.min(threads, cores));
  let pool = pools.get(size);
  if (pool === undefined) {
    pool = new RowPool(size);
    pools.set(size, pool);
  }
  return pool;
}
