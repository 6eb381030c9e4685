import { RECORDED_REASON, type OutcomeLine } from "@aegis/format/internal";
import type { CallFacts, ResponseFacts } from "./facts.js";
import type { CallRecord, SessionRecord } from "./follow.js";
import { callSpanId, sessionSpanId, sessionTraceId, type SpanRef } from "./ids.js";

/**
 * A recorded call as an OpenTelemetry span, and a Session as the span its calls hang from:
 * the mapping of SPEC Appendix A, as plain data. Nothing here loads OpenTelemetry; `sdk.ts`
 * turns a plan into what its exporters take.
 */

/** An attribute's value, as OTLP carries it. */
type AttributeValue = string | number | boolean;

/** One span, every field decided. */
export interface SpanPlan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** The parent: a call's Session, or the remote span a `traceparent` named; none for a Session. */
  readonly parent: (SpanRef & { readonly remote: boolean }) | undefined;
  readonly links: readonly { readonly context: SpanRef; readonly attributes: Readonly<Record<string, AttributeValue>> }[];
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly status: { readonly code: "unset" } | { readonly code: "error"; readonly message: string };
}

/** A span that cannot be made: a Line it needs carries no `time` (SPEC §13.7), as the reference's do not. */
export interface Untimed {
  readonly code: "untimed";
  /** The Session's index and the Line's seq, as far as known. */
  readonly sessionIndex: number | undefined;
  readonly seq: number;
}

/**
 * Plans spans in file order. It remembers, within a Session, the span of each parked call,
 * so that the call that later ran under its approval links to it.
 */
export class SpanPlanner {
  private readonly parked = new Map<string, SpanRef>();

  /** A call's span (SPEC Appendix A.3), or why it has none. */
  call(call: CallRecord, facts: CallFacts = {}): SpanPlan | Untimed {
    const first = call.intent ?? call.outcome?.point;
    const startMs = first?.timeMs;
    const endMs = call.outcome === undefined ? call.lastTimeMs : call.outcome.point.timeMs;
    if (first === undefined || startMs === undefined || endMs === undefined) {
      // The first of the call's Lines with no time.
      const untimed = [call.intent, call.outcome?.point].find((p) => p !== undefined && p.timeMs === undefined) ?? first;
      return { code: "untimed", sessionIndex: call.session.index, seq: untimed?.seq ?? 0 };
    }
    const session = sessionRef(call.session.openLineHash);
    const spanId = callSpanId(first.lineHash);
    const parent = facts.request?.parent;
    const traceId = parent?.traceId ?? session.traceId;
    const outcome = call.outcome?.line;
    const links: SpanPlan["links"][number][] = [{ context: session, attributes: { "aegis.link": "session" } }];
    const approvalRef = outcome?.decision_axes.approval_ref;
    const parkedCall = approvalRef === undefined ? undefined : this.parked.get(approvalRef);
    if (parkedCall !== undefined) links.push({ context: parkedCall, attributes: { "aegis.link": "parked_call" } });
    if (outcome?.policy.status === "pending_approval") this.parked.set(outcome.policy.approval_id, { traceId, spanId });
    const error = errorOf(call, facts.response);
    return {
      name: `execute_tool ${call.toolId}`,
      traceId,
      spanId,
      parent: parent === undefined ? { ...session, remote: false } : { ...parent, remote: true },
      links,
      startMs,
      endMs: Math.max(startMs, endMs),
      attributes: callAttributes(call, facts, error?.type),
      status: error === undefined ? { code: "unset" } : { code: "error", message: error.message },
    };
  }

  /** A Session's span (SPEC Appendix A.2), or why it has none. Forgets the Session's parked calls. */
  session(record: SessionRecord): SpanPlan | Untimed {
    this.parked.clear();
    const startMs = record.open.timeMs;
    const endMs = record.close?.timeMs ?? record.lastTimeMs;
    if (startMs === undefined || endMs === undefined)
      return { code: "untimed", sessionIndex: record.index, seq: startMs === undefined ? record.open.seq : (record.close?.seq ?? record.open.seq) };
    const ref = sessionRef(record.openLineHash);
    return {
      name: "aegis session",
      traceId: ref.traceId,
      spanId: ref.spanId,
      parent: undefined,
      links: [],
      startMs,
      endMs: Math.max(startMs, endMs),
      attributes: compact({
        ...sessionAttributes(record),
        "aegis.session.public_key": record.publicKey,
        "aegis.session.open.seq": record.open.seq,
        "aegis.session.close.line_hash": record.close?.lineHash,
        "aegis.session.close.seq": record.close?.seq,
        "aegis.session.closed": record.close !== undefined,
        "aegis.session.calls": record.calls,
      }),
      status: { code: "unset" },
    };
  }
}

function sessionRef(openLineHash: string): SpanRef {
  return { traceId: sessionTraceId(openLineHash), spanId: sessionSpanId(openLineHash) };
}

function sessionAttributes(session: CallRecord["session"]): Record<string, AttributeValue | undefined> {
  return {
    "aegis.session.index": session.index,
    "aegis.session.open.line_hash": session.openLineHash,
    "aegis.key_id": session.keyId,
  };
}

function callAttributes(call: CallRecord, facts: CallFacts, errorType: string | undefined): Record<string, AttributeValue> {
  const outcome = call.outcome?.line;
  const request = facts.request;
  const response = facts.response;
  // MCP's attributes only where the request bytes show a JSON-RPC request (SPEC Appendix A.3).
  const mcp = request?.method !== undefined;
  return compact({
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.toolId,
    "gen_ai.tool.call.id": call.callId,
    "mcp.method.name": request?.method,
    "jsonrpc.request.id": mcp ? request?.requestId : undefined,
    "rpc.response.status_code": response?.errorCode,
    "error.type": errorType,
    "gen_ai.tool.call.arguments": facts.content === true ? request?.arguments : undefined,
    "gen_ai.tool.call.result": facts.content === true && errorType === undefined ? response?.result : undefined,
    ...sessionAttributes(call.session),
    "aegis.call.ending": call.ending,
    "aegis.intent.seq": call.intent?.seq,
    "aegis.intent.line_hash": call.intent?.lineHash,
    "aegis.outcome.seq": call.outcome?.point.seq,
    "aegis.outcome.line_hash": call.outcome?.point.lineHash,
    "aegis.request_digest": call.requestDigest,
    "aegis.response_digest": outcome?.response_digest,
    "aegis.policy_set_hash": outcome?.policy_set_hash,
    "aegis.policy.status": outcome?.policy.status,
    "aegis.policy.rule": outcome?.decision_axes.matched_rule,
    "aegis.policy.reason": outcome === undefined ? undefined : "reason" in outcome.policy ? outcome.policy.reason : undefined,
    "aegis.policy.approval_id": outcome?.policy.status === "pending_approval" ? outcome.policy.approval_id : undefined,
    "aegis.policy.approval_ref": outcome?.decision_axes.approval_ref,
    "aegis.capability.status": outcome?.capability.status,
    "aegis.execution.status": outcome?.execution.status,
    "aegis.tool_spec_digest": outcome?.tool_spec_digest,
  });
}

/**
 * `error.type` and the status message (SPEC Appendix A.4): the first of the policy, capability
 * and execution stations that did not let the call through, passing over one that says it did
 * not judge the call; then the answer: a JSON-RPC error's code, or MCP's `isError`.
 */
function errorOf(call: CallRecord, response: ResponseFacts | undefined): { readonly type: string; readonly message: string } | undefined {
  const outcome = call.outcome?.line;
  if (outcome === undefined)
    return { type: "no_outcome", message: call.ending === "in_flight" ? "no outcome yet: the Session has not ended" : "its Session ended without an outcome" };
  const stopped = stations(outcome);
  const judged = stopped.find((s) => s.reason !== RECORDED_REASON.notEvaluated) ?? stopped.at(-1);
  if (judged !== undefined)
    return { type: judged.type, message: `${judged.station} ${judged.status}${judged.reason === undefined ? "" : `: ${judged.reason}`}` };
  if (response?.errorCode !== undefined) return { type: response.errorCode, message: response.errorMessage ?? `JSON-RPC error ${response.errorCode}` };
  if (response?.toolError === true) return { type: "tool_error", message: "the tool answered with isError: true" };
  return undefined;
}

interface Stopped {
  readonly station: "policy" | "capability" | "execution";
  readonly status: string;
  readonly type: string;
  readonly reason: string | undefined;
}

function stations(outcome: OutcomeLine): Stopped[] {
  const out: Stopped[] = [];
  const policy = outcome.policy;
  if (policy.status !== "allowed")
    out.push({
      station: "policy",
      status: policy.status,
      type: policy.status,
      reason: policy.status === "pending_approval" ? `approval ${policy.approval_id}` : policy.reason,
    });
  const capability = outcome.capability;
  if (capability.status === "denied") out.push({ station: "capability", status: "denied", type: "capability_denied", reason: capability.reason });
  const execution = outcome.execution;
  if (execution.status !== "success")
    out.push({
      station: "execution",
      status: execution.status,
      type: execution.status,
      reason: execution.status === "trap" ? execution.message : execution.status === "resource_exceeded" ? execution.kind : execution.reason,
    });
  return out;
}

function compact(values: Record<string, AttributeValue | undefined>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined) out[key] = value;
  return out;
}
