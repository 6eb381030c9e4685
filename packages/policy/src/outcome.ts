import { RECORDED_REASON, messageOf } from "@aegis/format/internal";
import type { CallEnding, CallOpening, CallResult, CapabilityGrant, DecisionAxes, ExecutionOutcome, FsGrant, NetGrant, PolicyOutcome } from "@aegis/format";
import type { Decision } from "./decide.js";
import type { Limits } from "./model.js";

/**
 * From a `decide` result to what the writer records (SPEC §5.3, §13.2), so that a runtime
 * records a decided call without building a grant or an outcome by hand. The words of a
 * refusal are the ones `aegis wrap` records, so records read the same whoever wrote them.
 */

/**
 * One call as a runtime knows it before deciding: its id, its tool and the verbatim request
 * bytes. Spread it into `decide`'s request, then hand it to {@link callOpening} and
 * {@link (outcomeOf:1)}.
 */
export interface DecidedCall {
  /** The call's id, unique among the Session's calls in flight (SPEC §5.3). */
  readonly call_id: string;
  /** The tool the call names, as the decision saw it. */
  readonly tool_id: string;
  /** The verbatim request bytes: the writer hashes them and keeps them in its Envelope. */
  readonly request: Uint8Array;
}

/**
 * What the call ran under. Every member is optional: by default the grant names no file
 * system and no network authority, and each ceiling is the allowing rule's limit, or 0 where
 * the rule set none (as `aegis wrap` records a call it does not confine).
 */
export interface GrantTerms {
  /** The grant's id; default `grant-` and the call id. */
  readonly grant_id?: string;
  /** The paths the call could read and write. */
  readonly fs?: FsGrant;
  /** The hosts, ports and methods the call could reach. */
  readonly net?: NetGrant;
  /** Overrides the rule's `max_memory_bytes`. */
  readonly max_memory_bytes?: number;
  /** Overrides the rule's `max_wall_ms`. */
  readonly max_wall_ms?: number;
  /** Overrides the rule's `max_output_bytes`. */
  readonly max_output_bytes?: number;
}

/** How an allowed call ended. Ignored for a call the decision refused: it never ran. */
export interface CallEnded {
  /** How the tool's execution ended; default `{ status: "success" }`. See {@link trapOf}. */
  readonly execution?: ExecutionOutcome;
  /** The authority the call ran under (default: none beyond the rule's limits). */
  readonly grant?: GrantTerms;
  /** Wall-clock milliseconds the tool ran, when measured. */
  readonly wall_ms?: number;
  /** Peak memory the tool used, when measured. */
  readonly peak_memory_bytes?: number;
}

/** {@link CallEnded} with the verbatim response bytes, which the writer hashes and keeps. */
export interface CallEndedWithResponse extends CallEnded {
  /** The verbatim response bytes. */
  readonly response: Uint8Array;
}

/**
 * The start of a decided call, for `RecordWriter.beginCall`, `call` or `recordUnrun`: the
 * call with the `policy_set_hash` of the set that decided it.
 *
 * @example
 * ```ts
 * const decision = decide(set, { ...call, axes: { role: "agent" } });
 * await writer.recordUnrun(callOpening(decision, call), outcomeOf(decision, call));
 * ```
 */
export function callOpening(decision: Decision, call: DecidedCall): CallOpening {
  return { call_id: call.call_id, tool_id: call.tool_id, policy_set_hash: decision.policy_set_hash, request: call.request };
}

/**
 * The outcome members of an allowed call, as the overload below, with the verbatim response
 * bytes: for `RecordWriter.endCall` or `call`, which hash the bytes and put them in the
 * Envelope. It comes first so that any value typed {@link CallEndedWithResponse} selects it.
 *
 * @throws TypeError when the decision refused the call: a call that never ran has no response.
 * @throws RangeError when a rule's limit is beyond 2^53 - 1, which a record cannot hold
 * (SPEC §3.2); pass the ceiling in `ended.grant` instead.
 */
export function outcomeOf(decision: Decision, call: Pick<DecidedCall, "call_id" | "tool_id">, ended: CallEndedWithResponse): CallEnding;
/**
 * The outcome members of a decided call (SPEC §5.3): the decision's `policy` and
 * `decision_axes` always; for an allowed call, a grant ({@link GrantTerms}) and how it ended;
 * for a refused one (denied, rate limited, parked for approval), a capability that was never
 * minted and an execution that never happened.
 *
 * @param ended - How an allowed call ended; with `response`, the result is for
 * `RecordWriter.endCall` or `call`, which put the bytes in the Envelope.
 * @throws RangeError when a rule's limit is beyond 2^53 - 1, which a record cannot hold
 * (SPEC §3.2); pass the ceiling in `ended.grant` instead.
 */
export function outcomeOf(decision: Decision, call: Pick<DecidedCall, "call_id" | "tool_id">, ended?: CallEnded): CallResult;
export function outcomeOf(
  decision: Decision,
  call: Pick<DecidedCall, "call_id" | "tool_id">,
  ended: CallEnded | CallEndedWithResponse = {},
): CallResult | CallEnding {
  if (decision.code !== "allowed") {
    if ("response" in ended) throw new TypeError(`outcomeOf: call ${call.call_id} was ${decision.code}, so it never ran and has no response to record`);
    return refusedOutcome(decision.policy, decision.decision_axes);
  }
  const grant = grantOf(call, decision.limits, ended.grant);
  const result: CallResult = {
    policy: decision.policy,
    capability: { status: "granted", grant },
    grant_id: grant.grant_id,
    execution: ended.execution ?? { status: "success" },
    ...(ended.wall_ms === undefined ? {} : { wall_ms: ended.wall_ms }),
    ...(ended.peak_memory_bytes === undefined ? {} : { peak_memory_bytes: ended.peak_memory_bytes }),
    decision_axes: decision.decision_axes,
  };
  return "response" in ended ? { ...result, response: ended.response } : result;
}

/**
 * The outcome of a call a policy refused before it ran: what `aegis wrap` records for a
 * denied, rate-limited or parked call (SPEC §17.2).
 */
export function refusedOutcome(policy: PolicyOutcome, axes: DecisionAxes): CallResult {
  return {
    policy,
    capability: { status: "denied", reason: RECORDED_REASON.blockedBeforeCapability },
    execution: { status: "host_denied", reason: RECORDED_REASON.notExecuted },
    decision_axes: axes,
  };
}

/** The execution of a tool that threw: a `trap` carrying the error's message. */
export function trapOf(error: unknown): ExecutionOutcome {
  return { status: "trap", message: messageOf(error) };
}

function grantOf(call: Pick<DecidedCall, "call_id" | "tool_id">, limits: Limits | undefined, terms: GrantTerms = {}): CapabilityGrant {
  return {
    grant_id: terms.grant_id ?? `grant-${call.call_id}`,
    tool_id: call.tool_id,
    ...(terms.fs === undefined ? {} : { fs: terms.fs }),
    ...(terms.net === undefined ? {} : { net: terms.net }),
    max_memory_bytes: terms.max_memory_bytes ?? ceiling("max_memory_bytes", limits?.max_memory_bytes),
    max_wall_ms: terms.max_wall_ms ?? ceiling("max_wall_ms", limits?.max_wall_ms),
    max_output_bytes: terms.max_output_bytes ?? ceiling("max_output_bytes", limits?.max_output_bytes),
  };
}

function ceiling(name: string, limit: bigint | undefined): number {
  if (limit === undefined) return 0;
  if (limit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`the rule's ${name} (${limit}) is beyond 2^53 - 1, which a record cannot hold; pass the ceiling in ended.grant`);
  }
  return Number(limit);
}
