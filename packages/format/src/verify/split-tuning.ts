/**
 * How a split walk cuts a record and bounds what a thread answers (ADR 0027, points 4 and 7):
 * the same numbers for `aegis verify`'s row threads and the report page's workers (ADR 0028).
 * No Node API here.
 */

/** How the split walk cuts a record; the defaults are measured (`npm run bench:verify-scale`). */
export interface SplitTuning {
  /** Bytes a piece holds at most (more for a row of the bound). */
  readonly pieceBytes: number;
  /** Bytes read and not yet walked, at most, shared by every thread. */
  readonly budgetBytes: number;
  /**
   * A thread answers at most one row for each this many bytes of its piece (at least one
   * row); the rest of the piece is read on the calling thread, should the walk get there
   * (ADR 0027, point 7). An answer is some 130 bytes a row, so 64 holds it to about twice
   * the piece, whatever its rows. A row the walk goes on from is over 100 bytes (SPEC §8.2
   * step 3: a `line_type`, a `seq` and a `prev_hash` of 64 hex digits), so at 64, in any
   * piece over 160 bytes, the walk stops or the piece ends before the budget does: a real
   * record costs the calling thread no rest.
   */
  readonly bytesPerRow: number;
}

/** The measured defaults: pieces of 256 KiB, 4 MiB read and not yet walked, a row answered for each 64 bytes. */
export const DEFAULT_SPLIT: SplitTuning = { pieceBytes: 256 << 10, budgetBytes: 4 << 20, bytesPerRow: 64 };

/** The rows a thread reads of a piece of `length` bytes, at most. */
export function rowBudget(tuning: SplitTuning, length: number): number {
  return Math.max(1, Math.ceil(length / Math.max(1, tuning.bytesPerRow)));
}

/**
 * Pieces out at once: two a thread and one being walked, so that no thread waits for the
 * walk, within the budget, which no thread count raises.
 */
export function windowOf(tuning: SplitTuning, threads: number): number {
  return Math.max(2, Math.min(2 * threads + 1, Math.floor(tuning.budgetBytes / Math.max(1, tuning.pieceBytes))));
}
