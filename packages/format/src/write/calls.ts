import type { LineHash, PolicySetHash } from "../wire/digest.js";
import type { IntentPayload, OutcomePayload, SignedPayload } from "../wire/line-types.js";

/** The shapes a caller of the writer's call API hands it (SPEC §13.2). */

/** Where an appended Line landed. */
export interface Appended {
  /** The Line's `seq` in the writer's Session. */
  readonly seq: number;
  /** The Line's `line_hash`, which the next Line's `prev_hash` names (SPEC §4). */
  readonly lineHash: LineHash;
}

/** What a call needs at its start so that an outcome can be written on every exit path. */
export interface CallStart extends IntentPayload {
  /** The Policy Set governing the Call, kept for the outcome the writer may have to write itself (SPEC §6). */
  readonly policy_set_hash: PolicySetHash;
}

/** A call's start given the verbatim request bytes: the writer hashes them (and keeps them, with an Envelope). */
export type CallOpening = Omit<CallStart, "request_digest"> & { readonly request: Uint8Array };

/** How a call ended: the outcome without what its start gave. */
export type CallResult = Omit<OutcomePayload, "call_id" | "tool_id" | "request_digest" | "policy_set_hash" | "envelope_access">;

/** A call's end given the verbatim response bytes in place of their digest. */
export type CallEnding = Omit<CallResult, "response_digest"> & { readonly response: Uint8Array };

/** How an outcome is made durable (SPEC §13.2). */
export interface EndOptions {
  /**
   * `now` (the default): fsynced at the end of this tick, as every Line. `soon`: written with
   * the next Line that must be durable now (sharing its fsync), or on its own within 2 ms,
   * off the event loop. For an outcome no one waits on, such as a relayed call's, whose
   * answer has already gone to its caller.
   */
  readonly sync?: "now" | "soon";
}

/** What a writer appends and never signs: an `intent` (SPEC §5.1). */
export interface UnsignedPayload {
  readonly line_type: "intent";
  readonly payload: IntentPayload;
}

/** Every Line a writer appends: its kind alone says whether it is signed. */
export type AppendedPayload = SignedPayload | UnsignedPayload;
