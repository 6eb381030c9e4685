import { messageOf } from "../durable/thrown.js";
import type { Row } from "../wire/row-splitter.js";
import type { JsonValue } from "../wire/json.js";
import { ChainWalk, type WalkOptions } from "./walk.js";
import { DEFAULT_TUNING, DeferredChecks, type CheckPool, type Tuning } from "./deferred-checks.js";
import type { Verification } from "./verdict.js";
import { FaultError } from "../fault-error.js";

/**
 * The verifier over rows, wherever they come from and wherever its signatures are checked:
 * Node's worker threads (`verify.ts`), a browser's Web Workers, or this thread. No Node API
 * here, so that browsers run this very code (adr/0015).
 */

/** The file could not be read: a different answer from any verdict (exit 2 in the CLI). */
export class RecordReadError extends FaultError<{ readonly path: string; readonly cause: unknown }> {
  constructor(
    /** The file that could not be read, or the name given to the stream that failed. */
    readonly path: string,
    /** The error the file system or the stream raised. */
    override readonly cause: unknown,
  ) {
    super("RecordReadError", { path, cause }, (f) => `read ${f.path}: ${messageOf(f.cause)}`);
  }
}

/** Reports bytes read every 4 MiB or so. */
export function progressOf(options: { readonly onProgress?: (bytesRead: number) => void }): (bytes: number) => void {
  let reported = 0;
  return (bytes) => {
    if (options.onProgress !== undefined && bytes - reported >= 1 << 22) {
      reported = bytes;
      options.onProgress(bytes);
    }
  };
}

/** Walk every row `chunks` yields, its signatures checked in `pool` when one is given. */
export async function walkRows(
  chunks: AsyncGenerator<readonly Row[]> | Generator<readonly Row[]>,
  name: string,
  options: WalkOptions,
  pool: CheckPool | undefined,
  tuning = DEFAULT_TUNING,
): Promise<Verification> {
  const verifier = new RowVerifier(options, pool, tuning);
  try {
    for (;;) {
      const rows = await nextRows(chunks, name);
      if (rows === undefined) break;
      for (const row of rows) {
        const wait = verifier.step(row);
        if (wait !== undefined) await wait;
      }
      // The first Tampered ends the walk: the rest of the file is not read (the rest of a
      // read's rows are stepped, and ignored).
      if (verifier.done) break;
    }
  } finally {
    await chunks.return(undefined);
  }
  return verifier.finish();
}

/**
 * The next read's rows, or undefined at the end. Only the reading is "could not read"
 * (a RecordReadError): a fault in the walk is not the file's.
 */
export async function nextRows(chunks: AsyncGenerator<readonly Row[]> | Generator<readonly Row[]>, name: string): Promise<readonly Row[] | undefined> {
  let next: IteratorResult<readonly Row[]>;
  try {
    next = await chunks.next();
  } catch (error) {
    throw new RecordReadError(name, error);
  }
  return next.done === true ? undefined : next.value;
}

/**
 * The verifier fed one row at a time, by whoever reads them: the walk on this thread, and
 * its signature checks in `pool` when there is one.
 */
export class RowVerifier {
  private readonly walk: ChainWalk;
  private readonly checks: DeferredChecks | undefined;

  constructor(options: WalkOptions, pool: CheckPool | undefined, tuning: Tuning = DEFAULT_TUNING) {
    this.checks = pool === undefined ? undefined : new DeferredChecks(pool, options.onLine, tuning);
    // The checks hold each Line for `onLine` until the signatures before it have passed.
    const walkOptions = this.checks === undefined || options.onLine === undefined ? options : { ...options, onLine: this.checks.line };
    this.walk = new ChainWalk(walkOptions, this.checks);
  }

  /** True once no later row can change the answer. */
  get done(): boolean {
    return this.walk.done || this.checks?.failure !== undefined;
  }

  /** The value the walk parsed from the row it was last given, if it parsed one (recheck reads it again otherwise). */
  get lastValue(): JsonValue | undefined {
    return this.walk.lastValue;
  }

  /**
   * Walk one row. A promise comes back only when the signature threads are a full window
   * behind: wait for it before the next row, so memory stays flat.
   */
  step(row: Row): Promise<void> | undefined {
    if (this.done) {
      this.walk.lastValue = undefined;
      return undefined;
    }
    this.walk.step(row);
    return this.checks?.pace();
  }

  /** The result, once the last row has been stepped (or the walk is done). */
  async finish(): Promise<Verification> {
    if (this.checks === undefined) return this.walk.finish();
    await this.checks.finish();
    return this.checks.failure === undefined ? this.walk.finish() : this.walk.finishAt(this.checks.failure);
  }
}
