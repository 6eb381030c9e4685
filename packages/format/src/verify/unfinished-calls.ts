/**
 * The calls a record left unfinished (SPEC §13.4, `unfinished_calls`): an `intent` whose
 * Session ended with no `outcome` for it, as when a writer was killed and a later Session
 * appended. The verdict does not change (SPEC §10: an `intent` without an `outcome` is not
 * a tamper signal); the count says what `aegis show` would otherwise be alone in showing.
 */

/** One call of an ended Session that has an `intent` and no `outcome`. */
export interface UnfinishedCall {
  /** The Session that left it unfinished (SPEC §7). */
  readonly session_index: number;
  /** The `call_id` its `intent` carries. */
  readonly call_id: string;
}

/** Every unfinished call counted, the first `MAX_LISTED_UNFINISHED_CALLS` of them listed. */
export interface UnfinishedCalls {
  /** How many intents of ended Sessions have no outcome. */
  readonly count: number;
  /** The first of them, in the order they were found unfinished: at most `MAX_LISTED_UNFINISHED_CALLS`. */
  readonly calls: readonly UnfinishedCall[];
}

/** How many unfinished calls a report names; the count goes on past it (SPEC §13.4). */
const MAX_LISTED_UNFINISHED_CALLS = 100;

/**
 * The bounds on calls waiting for their outcome in one Session (SPEC §18), those of
 * `aegis show`: past them, the call that has waited longest is taken as unfinished.
 */
export const MAX_WAITING_CALLS = 100_000;
export const MAX_WAITING_CHARS = 32 * 1024 * 1024;

/** Where the tally stood at a point of the walk: enough to give the answer as it was there. */
export interface UnfinishedMark {
  readonly count: number;
  readonly listed: number;
}

/**
 * The waiting calls of the current Session and the tally of the ended ones. Memory is
 * bounded: the waiting set by {@link MAX_WAITING_CALLS} and {@link MAX_WAITING_CHARS}, the
 * list by `MAX_LISTED_UNFINISHED_CALLS`.
 */
export class UnfinishedCallTally {
  /** call_id -> how many of its intents wait; in the order each call_id began waiting. */
  private waiting = new Map<string, number>();
  private waitingChars = 0;
  private count = 0;
  private readonly listed: UnfinishedCall[] = [];

  /** An `intent` of Session `session`: its call waits for its outcome. `callId` is kept: pass a copy, not a slice of a row. */
  intent(callId: string, session: number): void {
    const already = this.waiting.get(callId);
    if (already !== undefined) {
      this.waiting.set(callId, already + 1);
      return;
    }
    this.waiting.set(callId, 1);
    this.waitingChars += callId.length;
    // The Map's order is the order each call began waiting; deleting as it goes is safe.
    for (const oldest of this.waiting.keys()) {
      if (this.waiting.size <= MAX_WAITING_CALLS && this.waitingChars <= MAX_WAITING_CHARS) break;
      this.giveUp(oldest, session);
    }
  }

  /** A signed `outcome`: it finishes one waiting intent of its call_id, if there is one. */
  outcome(callId: string): void {
    const waiting = this.waiting.get(callId);
    if (waiting === undefined) return;
    if (waiting > 1) this.waiting.set(callId, waiting - 1);
    else {
      this.waiting.delete(callId);
      this.waitingChars -= callId.length;
    }
  }

  /** Session `session` ended: every call still waiting is unfinished. */
  endSession(session: number): void {
    for (const [callId, intents] of this.waiting) this.tally(callId, intents, session);
    this.waiting = new Map();
    this.waitingChars = 0;
  }

  mark(): UnfinishedMark {
    return { count: this.count, listed: this.listed.length };
  }

  /** The tally now, or as it stood at `mark`. */
  result(mark: UnfinishedMark = this.mark()): UnfinishedCalls {
    return { count: mark.count, calls: this.listed.slice(0, mark.listed) };
  }

  /** A call that has waited longest, past the bounds: unfinished now, as if its Session had ended. */
  private giveUp(callId: string, session: number): void {
    this.tally(callId, this.waiting.get(callId) ?? 0, session);
    this.waiting.delete(callId);
    this.waitingChars -= callId.length;
  }

  private tally(callId: string, intents: number, session: number): void {
    this.count += intents;
    for (let i = 0; i < intents && this.listed.length < MAX_LISTED_UNFINISHED_CALLS; i++) this.listed.push({ session_index: session, call_id: callId });
  }
}
