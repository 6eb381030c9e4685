import { RECORDED_REASON, unmatched } from "@aegis/format/internal";
import { PolicySetHash, type CallResult, type CapabilityGrant, type DecisionAxes, type PolicyOutcome } from "@aegis/format";
import { match } from "ts-pattern";
import { refusedOutcome } from "@aegis/policy";

/**
 * What a relayed call's outcome says (SPEC §17.2). Without a Policy Set the words are the
 * reference's, member for member, so a record made by either reads the same.
 */

/** `SHA-256("aegis-wrap-passthrough-v0")`: the set named when no Policy Set governed a call. */
export const PASSTHROUGH_POLICY_SET_HASH: PolicySetHash = PolicySetHash.of("aegis-wrap-passthrough-v0");

/** The `tool_id` of a `tools/call` that named no tool. */
export const UNKNOWN_TOOL = "<unknown>";

/**
 * aegis-ts: the `tool_id` of a client frame that is not a message (SPEC §17.1): refused,
 * and recorded by the digest of its bytes, since the record cannot hold what it failed to read.
 */
export const UNREADABLE_FRAME_TOOL = "<unreadable-frame>";

/** aegis-ts: the `tool_id` of a server frame kept from the client: it answers no request in flight (SPEC §17.2). */
export const DROPPED_ANSWER_TOOL = "<dropped-answer>";

/** What wrap records, and answers the client, for a `tools/call` that names no tool. */
export const MALFORMED = "tools/call without a string params.name";
const SIBLING_REFUSED = "not executed: sibling call in this batch was refused";

/** Why a call that reached the server has no answer in the record (SPEC §17.2). */
export type Unanswered =
  /** The server's stdout ended: the process is gone. */
  | { readonly code: "child_exited" }
  /** The client hung up and the server, still running, said nothing for the whole grace. */
  | { readonly code: "grace_expired" }
  /** aegis-ts: wrap was asked to stop (SIGINT, SIGTERM) before the server answered. */
  | { readonly code: "signalled"; readonly signal: string }
  /** aegis-ts: the client cancelled the call and no answer followed. */
  | { readonly code: "cancelled" }
  /** aegis-ts: a `tools/call` without an id, which nothing can answer. */
  | { readonly code: "notification" }
  /** aegis-ts: the in-process transport closed before the server answered. */
  | { readonly code: "transport_closed" }
  /** aegis-ts: the connection to a Streamable HTTP server ended, or a request to it failed (SPEC §17.10). */
  | { readonly code: "connection_lost" }
  /** aegis-ts: as `grace_expired`, where the client is not on stdin or the server is not a child (SPEC §17.10). */
  | { readonly code: "server_silent" }
  /** aegis-ts: as `signalled`, where the server is not a child (SPEC §17.10). */
  | { readonly code: "stopped"; readonly signal: string };

/**
 * The `execution.reason` recorded for a call that went unanswered (SPEC §17.2, [M17.3]): it
 * states what is true of the end. The first two are the reference's words, so that a record
 * reads the same whichever relay wrote it.
 */
function unansweredReason(why: Unanswered): string {
  return match(why)
    .with({ code: "child_exited" }, () => "child exited before responding")
    .with({ code: "grace_expired" }, () => "client closed stdin; child did not answer within the shutdown grace")
    .with({ code: "signalled" }, (w) => `aegis wrap received ${w.signal} before the child responded`)
    .with({ code: "cancelled" }, () => "cancelled by the client; no response followed")
    .with({ code: "notification" }, () => "sent as a notification; JSON-RPC lets no response answer it")
    .with({ code: "transport_closed" }, () => "the transport closed before the server responded")
    .with({ code: "connection_lost" }, () => "the connection to the server ended before it responded")
    .with({ code: "server_silent" }, () => "the client hung up; the server did not answer within the shutdown grace")
    .with({ code: "stopped" }, (w) => `aegis wrap received ${w.signal} before the server responded`)
    .exhaustive(unmatched);
}

/** Who decided a call: nobody (the pass-through) or a Policy Set. */
export type Governance =
  | { readonly code: "passthrough" }
  | { readonly code: "policy"; readonly policy: PolicyOutcome; readonly policySetHash: PolicySetHash; readonly axes: DecisionAxes };

export function policySetHashOf(governance: Governance): PolicySetHash {
  return governance.code === "policy" ? governance.policySetHash : PASSTHROUGH_POLICY_SET_HASH;
}

function axesOf(governance: Governance): DecisionAxes {
  return governance.code === "policy" ? governance.axes : {};
}

/**
 * The grant a relayed call ran under: none. wrap mints no authority and confines nothing,
 * so the record says so (`deny_all`: no fs, no net, every ceiling 0).
 */
function passthroughGrant(toolId: string, callId: string): CapabilityGrant {
  return { grant_id: grantIdOf(callId), tool_id: toolId, max_memory_bytes: 0, max_wall_ms: 0, max_output_bytes: 0 };
}

function grantIdOf(callId: string): string {
  return `wrap-passthrough-${callId}`;
}

/** The server answered (a JSON-RPC error too: the call ran, the tool erred). */
export function answered(toolId: string, callId: string, governance: Governance, wallMs: number): CallResult {
  return {
    policy: governance.code === "policy" ? governance.policy : { status: "allowed" },
    capability: { status: "granted", grant: passthroughGrant(toolId, callId) },
    grant_id: grantIdOf(callId),
    execution: { status: "success" },
    wall_ms: Math.max(0, Math.round(wallMs)),
    // Not measured: wrap does not meter the server.
    peak_memory_bytes: 0,
    decision_axes: axesOf(governance),
  };
}

/** The server never answered: policy and capability keep what was known before the call ran. */
export function unanswered(governance: Governance, why: Unanswered): CallResult {
  return {
    policy: governance.code === "policy" ? governance.policy : { status: "denied", reason: RECORDED_REASON.notEvaluated },
    capability: { status: "denied", reason: RECORDED_REASON.notEvaluated },
    execution: { status: "host_denied", reason: unansweredReason(why) },
    decision_axes: axesOf(governance),
  };
}

/** A Policy Set refused the call before it reached the server: as a runtime records it. */
export const refused = refusedOutcome;

/** The Policy Set allowed the call, and another call in its batch was refused. */
export function siblingRefused(policy: PolicyOutcome, axes: DecisionAxes): CallResult {
  return {
    policy,
    capability: { status: "denied", reason: RECORDED_REASON.notEvaluated },
    execution: { status: "host_denied", reason: SIBLING_REFUSED },
    decision_axes: axes,
  };
}

/** Both refusal members and `execution`, for what wrap refused before any policy (SPEC §17.2). */
function notRun(reason: string, execution: string = RECORDED_REASON.notExecuted): CallResult {
  return {
    policy: { status: "denied", reason },
    capability: { status: "denied", reason },
    execution: { status: "host_denied", reason: execution },
    decision_axes: {},
  };
}

/** A client frame that is not a message: `why` is a stable code of SPEC §17.1 (`not_utf8`, `duplicate_key`, ...). */
export function unreadableFrame(why: string): CallResult {
  return notRun(`frame not read: ${why}`);
}

/** A `tools/call` inside a JSON-RPC batch, which MCP no longer has: the batch is refused whole. */
export function inBatch(): CallResult {
  return notRun("tools/call inside a JSON-RPC batch");
}

/** A server frame kept from the client; `why` a stable code (`unpaired_id`, `no_id`, `not_utf8`, ...). */
export function droppedAnswer(why: string): CallResult {
  return notRun(`server frame not relayed: ${why}`, "not relayed to the client");
}

/** wrap refused the call for what it is, not by policy: it named no tool, or reused an id. */
export function malformed(reason: "no_name" | "duplicate_id"): CallResult {
  return notRun(reason === "no_name" ? MALFORMED : "request id already in flight");
}
