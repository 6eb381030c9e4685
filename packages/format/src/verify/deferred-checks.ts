import type { SignatureToCheck } from "../crypto/signing.js";
import { SignatureBatch } from "./signature-batch.js";
import { checkNow, type SignatureChecker, type SignatureStop, type SigningInput } from "./signature-checker.js";
import type { WalkedLine } from "./walk.js";

/**
 * Where deferred checks go: Node's worker threads (`SignaturePool`), or a browser's Web
 * Workers. Batches are answered in any order; the checker puts them back in order.
 */
export interface CheckPool {
  /** Threads that check at once: the window of batches out is a multiple of it. */
  readonly size: number;
  /** True once every thread can take a batch at once. */
  readonly ready: boolean;
  /** Starts the threads, if they are not running. */
  start(): void;
  /** The index of the batch's first signature that does not verify, or -1. */
  check(batch: SignatureBatch): Promise<number>;
}

/** How the parallel walk spreads its checks; the defaults are measured (`npm run bench:verify`). */
export interface Tuning {
  /**
   * Signatures checked on the calling thread before the pool's threads are started: starting
   * them costs each tens of milliseconds of a core, more than a small record's checks. Checks
   * go on here while they start, so no record waits for them.
   */
  readonly inline: number;
  /** The same, when the threads already run (an earlier verification in this process started them). */
  readonly inlineWhenRunning: number;
  /** Send checks to the threads as soon as `inline` is spent, started or not (tests, to force them there). */
  readonly eager: boolean;
  /** Signatures per batch: a few milliseconds of a thread's work, so a batch's postage is noise. */
  readonly batch: number;
  /** Batches out at once, per thread: enough that no thread waits for the walk. */
  readonly windowPerThread: number;
}

export const DEFAULT_TUNING: Tuning = { inline: 8192, inlineWhenRunning: 64, eager: false, batch: 256, windowPerThread: 2 };

/**
 * A record this large (a file whose size is known) holds tens of thousands of signatures:
 * the threads are started at once instead of after {@link DEFAULT_TUNING}'s `inline` checks.
 */
const LARGE_RECORD_BYTES = 16 << 20;

/** The tuning for a record of `size` bytes, when known. */
export function tuningFor(size: number | undefined): Tuning {
  return (size ?? 0) >= LARGE_RECORD_BYTES ? { ...DEFAULT_TUNING, inline: DEFAULT_TUNING.inlineWhenRunning } : DEFAULT_TUNING;
}

/**
 * A Line to hold past its row: a row's bytes live in the reader's buffer, which the next read
 * overwrites, so the canonical bytes are copied (the parsed value owns its strings already).
 */
function detached(line: WalkedLine): WalkedLine {
  const canonical = line.canonical();
  const kept = typeof canonical === "string" ? canonical : Uint8Array.from(canonical);
  return { ...line, canonical: () => kept };
}

interface Sent {
  readonly count: number;
  readonly stops: readonly SignatureStop[];
  /** Settles (never rejects) once the pool has answered. */
  done: Promise<void>;
  /** The pool's answer: the index of the first check that failed (-1 none), or its error. */
  answer?: { readonly failed: number } | { readonly error: unknown };
}

/**
 * The parallel walk's signature checker: the walk goes on as if each signature passed while
 * the pool checks them in order-stamped batches; the first that fails is the answer
 * (`failure`), whatever order threads finish in. At most `window` batches are out at once,
 * so memory stays flat however long the record. Lines are told to `onLine` only once every
 * signature up to them has passed, so a consumer never sees a Line past the break.
 */
export class DeferredChecks implements SignatureChecker {
  private inline: number;
  private deferring = false;
  private batch = new SignatureBatch();
  private stops: SignatureStop[] = [];
  private readonly sent: Sent[] = [];
  private readonly held: { readonly ticket: number; readonly line: WalkedLine }[] = [];
  private submitted = 0;
  private confirmed = 0;
  /** The first deferred check that failed: where the sequential walk would have stopped. */
  failure: SignatureStop | undefined;

  private readonly window: number;

  constructor(
    private readonly pool: CheckPool,
    private readonly onLine: ((line: WalkedLine) => void) | undefined,
    private readonly tuning: Tuning = DEFAULT_TUNING,
  ) {
    this.inline = pool.ready ? Math.min(tuning.inline, tuning.inlineWhenRunning) : tuning.inline;
    this.window = Math.max(1, tuning.windowPerThread * pool.size);
  }

  check(claim: SignatureToCheck, input: SigningInput, stop: () => SignatureStop): boolean {
    if (!this.deferring) {
      if (this.inline > 0) {
        this.inline--;
        return checkNow(claim, input);
      }
      this.pool.start();
      if (!this.tuning.eager && !this.pool.ready) return checkNow(claim, input);
      this.deferring = true;
    }
    if (input.row !== undefined && input.cut !== undefined) this.batch.addCut(claim, input.row, input.cut.start, input.cut.end);
    else this.batch.add(claim, input.text());
    this.stops.push(stop());
    this.submitted++;
    if (this.batch.count >= this.tuning.batch) this.send();
    return true;
  }

  /** The walk's `onLine`, holding each Line until the signatures before it have passed. */
  readonly line = (line: WalkedLine): void => {
    if (this.onLine === undefined) return;
    if (this.submitted === this.confirmed) this.onLine(line);
    else this.held.push({ ticket: this.submitted, line: detached(line) });
  };

  /**
   * Between rows: take in answers that came, and when the window is full, a promise of the
   * oldest batch's answer to wait for (undefined otherwise, so a row costs no await).
   */
  pace(): Promise<void> | undefined {
    this.settle();
    const oldest = this.sent[0];
    if (oldest === undefined || this.sent.length < this.window) return undefined;
    return oldest.done.then(() => this.settle());
  }

  /** After the last row: send what is left and wait for every answer up to the first failure. */
  async finish(): Promise<void> {
    this.send();
    // A failure empties `sent`: nothing after it is waited for.
    for (let oldest = this.sent[0]; oldest !== undefined; oldest = this.sent[0]) {
      await oldest.done;
      this.settle();
    }
  }

  private send(): void {
    if (this.batch.count === 0) return;
    const sent: Sent = { count: this.batch.count, stops: this.stops, done: Promise.resolve() };
    this.sent.push(sent);
    sent.done = this.pool.check(this.batch).then(
      (failed) => void (sent.answer = { failed }),
      (error: unknown) => void (sent.answer = { error }),
    );
    this.batch = new SignatureBatch();
    this.stops = [];
  }

  /** Answers in the order batches were sent: an earlier batch's failure outranks any later one. */
  private settle(): void {
    while (this.failure === undefined) {
      const oldest = this.sent[0];
      const answer = oldest?.answer;
      if (oldest === undefined || answer === undefined) return;
      this.sent.shift();
      if ("error" in answer) throw answer.error;
      if (answer.failed >= 0) {
        this.failure = oldest.stops[answer.failed];
        this.confirmed += answer.failed;
        this.sent.length = 0;
      } else {
        this.confirmed += oldest.count;
      }
      this.release();
    }
  }

  private release(): void {
    for (let next = this.held[0]; next !== undefined && next.ticket <= this.confirmed; next = this.held[0]) {
      this.held.shift();
      this.onLine?.(next.line);
    }
  }
}
