import type { WalkedLine } from "./walk.js";

/** How to verify: the trust set and a per-Line callback (what a walk takes), progress, the row bound and threads. */
export interface VerifyOptions {
  /**
   * Public keys (64 lowercase hex) anchored out of band. Absent: an unpinned walk.
   * Present, even empty: every `open` Line's key must be in it (SPEC §8.4).
   */
  readonly trust?: readonly string[];
  /** Called for each accepted Line, in file order. */
  readonly onLine?: (line: WalkedLine) => void;
  /** Called with the number of bytes read so far, every 4 MiB or so. */
  readonly onProgress?: (bytesRead: number) => void;
  /** The row bound; defaults to `MAX_ROW_BYTES`. */
  readonly maxRowBytes?: number;
  /**
   * How many worker threads check signatures while the walk goes on (SPEC §8 is unchanged:
   * the verdict, reason and position are the sequential walk's). Defaults to one per core
   * (`os.availableParallelism()`); 0 checks every signature on the calling thread, for
   * environments without worker threads. A small record never starts the threads.
   */
  readonly threads?: number;
}
