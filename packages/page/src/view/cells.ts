import { describePosition, type DecisionAxes, type OutcomeLine } from "@aegis/format/browser";
import type { Entry, RecheckedCall, ReportData } from "@aegis/cli/browser";
import type { Account, CallEntry } from "../account.js";

/** What every row is read against: the record's account and the facts written with the page. */
export interface RowContext {
  readonly account: Account;
  readonly data: ReportData;
  /** Recheck verdicts by the row of their outcome. */
  readonly recheckByLine: ReadonlyMap<number, RecheckedCall>;
}

export function rowContext(account: Account, data: ReportData): RowContext {
  return { account, data, recheckByLine: new Map((data.recheck?.calls ?? []).map((c) => [c.line, c])) };
}

/**
 * One table row's cells, as text: what a person reads, and what the filters and the
 * search look at. Every state is spelled in words, so the page reads without colour.
 */
export interface Cells {
  readonly line: string;
  readonly time: string;
  readonly session: string;
  readonly what: string;
  readonly tool: string;
  readonly capability: string;
  readonly decision: string;
  readonly outcome: string;
  readonly duration: string;
  readonly approval: string;
  readonly recheck: string;
  readonly envelope: string;
  /** Which of the filters of the page this row passes. */
  readonly classes: ReadonlySet<RowClass>;
  /** A call's decision axes, for the path and host filters; absent for every other row, and a call with no outcome. */
  readonly axes?: DecisionAxes;
  readonly afterBreak: boolean;
  /** What `aegis recheck` found for a call, to make a change stand out; absent without a recheck. */
  readonly recheckCode?: RecheckedCall["code"];
}

export type RowClass = "call" | "denied" | "parked" | "error" | "in_flight";

const NONE = "";

export function cellsOf(entry: Entry, context: RowContext): Cells {
  const account = context.account;
  const afterBreak = "after_break" in entry && entry.after_break;
  const base = {
    time: NONE,
    tool: NONE,
    capability: NONE,
    decision: NONE,
    outcome: NONE,
    duration: NONE,
    approval: NONE,
    recheck: NONE,
    envelope: NONE,
    classes: new Set<RowClass>(),
    afterBreak,
  };
  switch (entry.kind) {
    case "session":
      return { ...base, line: String(entry.line), time: entry.time ?? NONE, session: String(entry.session_index), what: "Session opened" };
    case "close":
      return { ...base, line: String(entry.line), time: entry.time ?? NONE, session: String(entry.at.session_index), what: "Session closed" };
    case "decision": {
      const parked = account.parkedBy.get(entry.record.approval_id);
      const v = entry.record.verdict;
      return {
        ...base,
        line: String(entry.line),
        time: entry.record.time ?? NONE,
        session: String(entry.at.session_index),
        what: `Decision on ${entry.record.approval_id}`,
        decision: v.verdict === "approved" ? "approved" : `denied: ${v.reason}`,
        approval: parked === undefined ? "answers no park in this file" : `answers call ${parked.call_id}`,
      };
    }
    case "other":
      return {
        ...base,
        line: String(entry.line),
        session: String(entry.at.session_index),
        what: entry.line_type === "checkpoint" ? "Checkpoint (reserved)" : `Line of unknown type ${entry.line_type}`,
        outcome: entry.problems.length > 0 ? `does not fit its type: ${entry.problems.join("; ")}` : NONE,
      };
    case "unreadable":
      return { ...base, line: String(entry.line), session: NONE, what: "Unreadable row", outcome: entry.detail };
    case "call":
      return callCells(entry, context, base);
  }
}

function callCells(entry: CallEntry, context: RowContext, base: Omit<Cells, "line" | "session" | "what">): Cells {
  const o = entry.outcome?.record;
  const classes = new Set<RowClass>(["call"]);
  // The row the call began on, as its Time is the intent's: a call is found where it began.
  const line = entry.intent?.line ?? entry.outcome?.line ?? 0;
  const at = entry.outcome?.at ?? entry.intent?.at;
  const begun = entry.intent?.time;
  const ended = o?.time;
  const rechecked = entry.outcome === undefined ? undefined : context.recheckByLine.get(entry.outcome.line);
  const cells = {
    ...base,
    ...(rechecked === undefined ? {} : { recheckCode: rechecked.code }),
    classes,
    line: String(line),
    session: at === undefined ? NONE : String(at.session_index),
    what: entry.call_id,
    tool: entry.tool_id,
    time: begun ?? ended ?? NONE,
    duration:
      begun !== undefined && ended !== undefined ? `${Date.parse(ended) - Date.parse(begun)} ms` : o?.wall_ms !== undefined ? `${o.wall_ms} ms (ran)` : NONE,
    // `aegis recheck` reports each call by its outcome's row.
    recheck: rechecked?.text ?? NONE,
    envelope: envelopeText(context.data, entry),
  };
  if (o === undefined) {
    classes.add("in_flight");
    return { ...cells, decision: "in flight", outcome: "none: in flight when its Session ended" };
  }
  const decision = decisionText(o);
  if (o.policy.status === "denied" || o.policy.status === "rate_limited" || (o.policy.status === "allowed" && o.capability.status === "denied"))
    classes.add("denied");
  if (o.policy.status === "pending_approval") classes.add("parked");
  const e = o.execution;
  if (
    e.status === "trap" ||
    e.status === "resource_exceeded" ||
    (e.status === "host_denied" && o.policy.status === "allowed" && o.capability.status === "granted")
  )
    classes.add("error");
  return {
    ...cells,
    axes: o.decision_axes,
    capability: o.decision_axes.capability ?? NONE,
    decision,
    outcome: outcomeText(o),
    approval: approvalText(o, context.account),
  };
}

function decisionText(o: OutcomeLine): string {
  const rule = o.decision_axes.matched_rule;
  const by = rule === undefined ? "" : ` (rule ${rule})`;
  switch (o.policy.status) {
    case "allowed":
      return o.capability.status === "denied" ? `allowed${by}; capability denied: ${o.capability.reason}` : `allowed${by}`;
    case "denied":
      return `denied${by}: ${o.policy.reason}`;
    case "rate_limited":
      return `rate limited${by}: ${o.policy.reason}`;
    case "pending_approval":
      return `parked for approval${by}`;
  }
}

function outcomeText(o: OutcomeLine): string {
  const e = o.execution;
  switch (e.status) {
    case "success":
      return "success";
    case "trap":
      return `trap: ${e.message}`;
    case "resource_exceeded":
      return `resource exceeded: ${e.kind}`;
    case "host_denied":
      return `not run: ${e.reason}`;
  }
}

function approvalText(o: OutcomeLine, account: Account): string {
  if (o.policy.status === "pending_approval") {
    const decided = account.decidedBy.get(o.policy.approval_id);
    if (decided === undefined) return `${o.policy.approval_id}: no decision in this file`;
    const v = decided.record.verdict;
    const answer = v.verdict === "approved" ? "approved" : `denied (${v.reason})`;
    return `${o.policy.approval_id}: ${answer} at ${describePosition(decided.at)}${decided.record.time === undefined ? "" : `, ${decided.record.time}`}`;
  }
  const ref = o.decision_axes.approval_ref;
  if (ref !== undefined) {
    const parked = account.parkedBy.get(ref);
    return `resumes ${ref}${parked === undefined ? "" : ` (parked by call ${parked.call_id})`}`;
  }
  return NONE;
}

function envelopeText(data: ReportData, entry: CallEntry): string {
  if (data.envelope === null) return NONE;
  const request = data.envelope.digests[entry.request_digest];
  const responseDigest = entry.outcome?.record.response_digest;
  const response = responseDigest === undefined ? undefined : data.envelope.digests[responseDigest];
  const parts = [`request ${request?.status ?? "missing"}`];
  if (responseDigest !== undefined) parts.push(`response ${response?.status ?? "missing"}`);
  return parts.join(", ");
}
