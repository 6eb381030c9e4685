import {
  describeIndeterminate,
  describeTampered,
  describeVerdict,
  unmatched,
  type IndeterminateReason,
  type Position,
  type TamperedReason,
  type UnfinishedCalls,
  type Verification,
} from "@aegis/format/browser";
import { match } from "ts-pattern";
import { exitCodeOfVerdict, type ExitCode } from "./exit-code.js";

/*
 * What `aegis verify` reports that the report page shows the same way: the `--json` document
 * and the line on calls that never finished (SPEC §13.4). No Node API: the page bundles this
 * module through `@aegis/cli/browser` (adr/0031), so both say the same thing of one record.
 */

/** How many unfinished calls the stderr line names before it says how many more there are. */
const NAMED_ON_STDERR = 10;

/**
 * How many calls ended Sessions left unfinished, and the first ten, grouped by Session; or
 * undefined when none. A call id a file chose is quoted unless it is plain, so that the
 * text stays one line.
 */
export function summarizeUnfinishedCalls(u: UnfinishedCalls): string | undefined {
  if (u.count === 0) return undefined;
  const named = u.calls.slice(0, NAMED_ON_STDERR);
  const groups: string[] = [];
  let session: number | undefined;
  let ids: string[] = [];
  for (const call of named) {
    if (call.session_index !== session) {
      if (session !== undefined) groups.push(`session ${session}: ${ids.join(", ")}`);
      session = call.session_index;
      ids = [];
    }
    ids.push(/^[\w.:@/+-]+$/.test(call.call_id) ? call.call_id : JSON.stringify(call.call_id));
  }
  if (session !== undefined) groups.push(`session ${session}: ${ids.join(", ")}`);
  const more = u.count - named.length;
  const which = `${groups.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
  return u.count === 1 ? `1 call never finished before its Session ended (${which})` : `${u.count} calls never finished before their Session ended (${which})`;
}

/** Where a reason points: a position, a row number, a Session, or nowhere. */
export type Where = { readonly session_index: number; readonly seq: number } | { readonly line: number } | { readonly session_index: number } | null;

function whereTampered(r: TamperedReason): Where {
  return match(r)
    .with({ code: "chain_broken" }, { code: "bad_signature" }, { code: "untrusted_key" }, { code: "duplicate_decision" }, (x): Position => x.at)
    .with({ code: "seq_out_of_order" }, { code: "session_boundary_broken" }, (x) => ({ session_index: x.session_index }))
    .with({ code: "malformed_line" }, (x) => ({ line: x.line }))
    .with({ code: "truncated" }, (x) => ({ line: x.lines + 1 }))
    .with({ code: "checkpoint_mismatch" }, { code: "checkpoint_unsigned" }, { code: "inconsistent_checkpoints" }, (x) => ({ line: x.size }))
    .exhaustive(unmatched);
}

function whereIndeterminate(r: IndeterminateReason): Where {
  return match(r)
    .with({ code: "unknown_line_type" }, { code: "reserved_checkpoint" }, (x): Position => x.at)
    .with({ code: "torn_final_line" }, { code: "line_too_long" }, (x) => ({ line: x.line }))
    .with({ code: "unanchored_tail" }, { code: "missing_line" }, (x) => ({ session_index: x.session_index }))
    .with({ code: "empty_chain" }, () => null)
    .with({ code: "too_few_witnesses" }, (x) => ({ line: x.size }))
    .exhaustive(unmatched);
}

/**
 * The `--json` document (schema `aegis.verify/1`, README "aegis verify --json"). One
 * object, the same facts as the text form plus counts and the head.
 */
export function verifyJson(v: Verification, pinned: boolean): Record<string, unknown> {
  const reason = match(v.verdict)
    .with({ status: "verified" }, () => null)
    .with({ status: "tampered" }, (t) => ({ ...t.reason, text: describeTampered(t.reason) }))
    .with({ status: "indeterminate" }, (i) => ({ ...i.reason, text: describeIndeterminate(i.reason) }))
    .exhaustive(unmatched);
  const where = match(v.verdict)
    .with({ status: "verified" }, () => null)
    .with({ status: "tampered" }, (t) => whereTampered(t.reason))
    .with({ status: "indeterminate" }, (i) => whereIndeterminate(i.reason))
    .exhaustive(unmatched);
  const exitCode: ExitCode = exitCodeOfVerdict(v.verdict);
  return {
    schema: "aegis.verify/1",
    verdict: v.verdict.status,
    text: describeVerdict(v),
    reason,
    position: where,
    coverage: v.coverage ?? null,
    key_ids: v.key_ids,
    trust_label: v.trust,
    // The same value under its first name, kept so that aegis.verify/1 readers go on working.
    trust: v.trust,
    pinned,
    in_flight: inFlight(v),
    lines: v.lines,
    sessions: v.sessions,
    head: v.head ?? null,
    unfinished_calls: v.unfinished_calls,
    ...(v.anchored === undefined ? {} : { anchored: { checkpoint: v.anchored.checkpoint, size: v.anchored.size } }),
    exit_code: exitCode,
  };
}

/** The calls in flight when the record ends: from its anchor when it has one, else from the reason. */
export function inFlight(v: Verification): readonly string[] {
  if (v.anchored !== undefined) return v.anchored.in_flight;
  return v.verdict.status === "indeterminate" && v.verdict.reason.code === "unanchored_tail" ? v.verdict.reason.in_flight : [];
}
