import type { CallStart } from "./calls.js";
import { RecordWriterError } from "./writer-error.js";

/**
 * Where each call begun on a writer stands (SPEC §13.2): one map from call id to its phase.
 * An id is taken from the moment its call begins (its request bytes may still be being kept)
 * until its outcome is appended, so that two calls never share one.
 */
export type CallPhase =
  /** Its request bytes are being kept in the Envelope; no intent yet. */
  | { readonly code: "starting" }
  /** Its intent is appended; it waits for its outcome (`close()` writes one if no one does). */
  | { readonly code: "open"; readonly start: CallStart }
  /** Its outcome waits for its response bytes to be kept. */
  | { readonly code: "ending"; readonly start: CallStart };

export class CallLedger {
  private readonly calls = new Map<string, CallPhase>();
  /** Puts under way (requests of calls starting, responses of calls ending): close() waits for them. */
  private readonly work = new Set<Promise<unknown>>();

  /** Take `callId` for a call that is starting. @throws RecordWriterError `duplicate_call`. */
  reserve(callId: string): void {
    if (this.calls.has(callId)) throw new RecordWriterError({ code: "duplicate_call", callId });
    this.calls.set(callId, { code: "starting" });
  }

  /** The call's intent is appended. */
  open(start: CallStart): void {
    this.calls.set(start.call_id, { code: "open", start });
  }

  /** The call that is open under `callId`, if one is. */
  openCall(callId: string): CallStart | undefined {
    const phase = this.calls.get(callId);
    return phase?.code === "open" ? phase.start : undefined;
  }

  /** Its outcome now waits for its response bytes: the id stays taken, and close() will not abandon it. */
  ending(start: CallStart): void {
    this.calls.set(start.call_id, { code: "ending", start });
  }

  /** Give the id back, if it is still this call's (it may have been taken again since). */
  release(callId: string, start?: CallStart): void {
    const phase = this.calls.get(callId);
    if (phase === undefined) return;
    if (start === undefined || (phase.code !== "starting" && phase.start === start)) this.calls.delete(callId);
  }

  /** An outcome was refused before it was appended: the call stays open, unless its id was taken again. */
  reopen(start: CallStart): void {
    if (!this.calls.has(start.call_id)) this.open(start);
  }

  /** Ids of the calls whose intent is written and whose outcome is not. */
  openIds(): string[] {
    return [...this.calls].filter(([, phase]) => phase.code === "open").map(([id]) => id);
  }

  /** Keep `work` for close() to wait for. */
  track<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    const forget = (): void => void this.work.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Whether a put is under way. */
  get busy(): boolean {
    return this.work.size > 0;
  }

  /** Settle the puts under way now (more may begin meanwhile: ask {@link busy} again). */
  settle(): Promise<unknown> {
    return Promise.allSettled([...this.work]);
  }
}
