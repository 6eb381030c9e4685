import { asError } from "./sync.js";

/** What a GroupCommit writes its batches to and makes durable: a file, or a store's files. */
export interface CommitTarget {
  /** Write everything appended since the last write (synchronously; throws on failure). */
  write(): void;
  /**
   * Make what was written durable. `inPlace`: one waiter needs it now and nothing else is in
   * flight, so the fsync may run on this thread (the target may still choose the pool).
   */
  sync(inPlace: boolean): Promise<void>;
  /** After a failure: forget what was appended and not written. */
  discard(): void;
}

/** How soon an append must be durable: with this tick's batch, or with the next batch that is. */
export type Urgency = "now" | "soon";

type Waiter = { readonly resolve: () => void; readonly reject: (error: Error) => void };

/** How long an append made "soon" waits for an urgent one to share its fsync with. */
const SOON_MS = 2;
/** Two fsyncs in flight let the next batch be written while the previous one syncs. */
const MAX_SYNCS_IN_FLIGHT = 2;
/** A burst of this many appends is written and synced without waiting for the tick's end. */
const EAGER_BATCH = 16;

/**
 * Group commit (ADR 0004, SPEC §13.2, §14.5), for the Chain writer and the Envelope store
 * alike: appends made together are written together and made durable by one fsync, and each
 * append's promise resolves only after an fsync that began after its bytes were written, and
 * after every earlier batch. Two fsyncs may be in flight, so the next batch is written while
 * the previous one syncs; a burst of many appends starts syncing before the tick ends.
 */
export class GroupCommit {
  private waiters: Waiter[] = [];
  /** Waiters in the batch who wait now (not "soon"). */
  private urgent = 0;
  private syncing = 0;
  private scheduled = false;
  private deferred: NodeJS.Timeout | undefined;
  private lastSynced: Promise<unknown> = Promise.resolve();
  private stopped: Error | undefined;

  constructor(
    private readonly target: CommitTarget,
    /** The error every waiter is refused with once a write or sync has failed. */
    private readonly failureOf: (cause: Error) => Error,
  ) {}

  /** The failure that stopped this commit, if one did: every later append must be refused. */
  get failure(): Error | undefined {
    return this.stopped;
  }

  /** Resolves with `value` once what was appended before this call is durable. */
  durable<T>(value: T, urgency: Urgency = "now"): Promise<T> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    const promise = new Promise<T>((resolve, reject) => this.waiters.push({ resolve: () => resolve(value), reject }));
    if (urgency === "now") this.urgent++;
    if (this.waiters.length >= EAGER_BATCH && this.syncing < MAX_SYNCS_IN_FLIGHT) {
      // Many appends in one burst: start syncing these now, on the other core, while this
      // thread prepares the rest of the burst.
      this.flush(false);
    } else if (urgency === "soon") {
      // Nobody waits on it now: it rides with the next urgent batch, or goes on its own
      // after SOON_MS, off the event loop.
      this.deferred ??= setTimeout(() => {
        this.deferred = undefined;
        this.flush(true);
      }, SOON_MS);
    } else if (!this.scheduled) {
      this.scheduled = true;
      // At the end of this tick, so that appends made together are written together.
      process.nextTick(() => this.flush(false));
    }
    return promise;
  }

  /** Stop: refuse every waiter now and later with `cause` (made into the target's error). */
  fail(cause: unknown): Error {
    this.stopped ??= this.failureOf(asError(cause));
    for (const w of this.waiters) w.reject(this.stopped);
    this.waiters = [];
    this.urgent = 0;
    this.target.discard();
    return this.stopped;
  }

  private flush(offThread: boolean): void {
    this.scheduled = false;
    if (this.deferred !== undefined) {
      clearTimeout(this.deferred);
      this.deferred = undefined;
    }
    if (this.waiters.length === 0 || this.stopped !== undefined || this.syncing >= MAX_SYNCS_IN_FLIGHT) return;
    const waiters = this.waiters;
    const urgent = this.urgent;
    this.waiters = [];
    this.urgent = 0;
    try {
      this.target.write();
    } catch (error) {
      this.waiters = [...waiters, ...this.waiters];
      this.fail(error);
      return;
    }
    this.syncing++;
    const synced = this.target.sync(!offThread && urgent === 1 && this.syncing === 1);
    this.lastSynced = Promise.all([this.lastSynced, synced]).then(
      () => {
        this.syncing--;
        const stopped = this.stopped;
        if (stopped !== undefined) for (const w of waiters) w.reject(stopped);
        else for (const w of waiters) w.resolve();
        this.flush(false);
      },
      (error: unknown) => {
        this.syncing--;
        this.waiters = [...waiters, ...this.waiters];
        this.fail(error);
      },
    );
  }
}
