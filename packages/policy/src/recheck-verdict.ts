import { unmatched, unreachable } from "@aegis/format/internal";
import type { PolicyOutcome, RequestDigest, ToolSpecDigest } from "@aegis/format";
import { match } from "ts-pattern";
import type { UnboundParameter } from "./select.js";

/**
 * Recheck verdicts (SPEC §16): one per recorded outcome, saying how the recorded policy
 * verdict compares with what a Policy Set decides now, or why that cannot be said.
 */

/** A recorded `policy.status`. */
export type PolicyStatus = PolicyOutcome["status"];

/** What a Policy Set decides now, as a class: recheck mints no approval id and counts no window. */
export type NowClass = "allowed" | "denied" | "pending_approval";

/** The rule that decides now, or the set's default. */
export type NowRule = { readonly kind: "rule"; readonly id: string } | { readonly kind: "default" };

/** What the outcome Line recorded. */
export interface Recorded {
  /** The verdict the call was given when it was made: the outcome's `policy.status`. */
  readonly status: PolicyStatus;
  /** `decision_axes.matched_rule`; absent when the record names none (a default). */
  readonly matched_rule?: string;
}

/** Which call a verdict is about. */
export interface RecheckSubject {
  /** Absent when the Line carries no `call_id` (rendered `-`). */
  readonly call_id?: string;
  /** Counted over `open` Lines from 0; 0 before the first (SPEC §7). */
  readonly session_index: number;
  /** The Line's `seq`; 0 when it carries none. */
  readonly seq: number;
  /** The row's number among the file's non-blank rows (SPEC §1.1). */
  readonly line: number;
  /** Given current tool definitions: how the call's tool compares (SPEC §17.6). */
  readonly tool_spec?: ToolSpecCheck;
}

/**
 * The definition a call's tool had when the call was made (its outcome's
 * `tool_spec_digest`) against the one a server lists now (SPEC §17.6).
 */
export type ToolSpecCheck =
  | { readonly code: "unchanged"; readonly digest: ToolSpecDigest }
  | { readonly code: "changed"; readonly recorded: ToolSpecDigest; readonly current: ToolSpecDigest }
  /** The server no longer lists the tool. */
  | { readonly code: "removed"; readonly recorded: ToolSpecDigest }
  /** The outcome names no definition: nothing to compare. */
  | { readonly code: "unpinned"; readonly current?: ToolSpecDigest };

/** Why a recorded decision could not be re-evaluated (SPEC §16.3). */
export type RecheckIndeterminate =
  | {
      readonly code: "missing_envelope";
      readonly request_digest: RequestDigest;
      readonly detail:
        { readonly code: "no_lookup" } | { readonly code: "missing" } | { readonly code: "redacted"; readonly redacted_at: string; readonly reason: string };
    }
  | { readonly code: "envelope_digest_mismatch"; readonly expected: RequestDigest; readonly found: string }
  | {
      readonly code: "unknown_policy_set_hash";
      readonly detail: { readonly code: "other_schema"; readonly schema_version: string } | { readonly code: "not_given"; readonly policy_set_hash: string };
    }
  | {
      readonly code: "no_binding";
      readonly detail:
        | { readonly code: "unreadable_outcome"; readonly problems: readonly string[] }
        | { readonly code: "unbound"; readonly rule: string; readonly parameter: Exclude<UnboundParameter, "request" | "arguments"> }
        /** The request bytes give one of the rule's argument matchers no single reading (SPEC §15.2). */
        | { readonly code: "unevaluable"; readonly rule: string };
    }
  | { readonly code: "rate_limit_unevaluable"; readonly rule: string };

/** The five reasons a verdict can be indeterminate (SPEC §16.3): the token its report line names. */
export type RecheckIndeterminateCode = RecheckIndeterminate["code"];

/** Every indeterminate reason, in a fixed order: for listing or counting each one, those that occur 0 times included. */
export const RECHECK_INDETERMINATE_CODES: readonly RecheckIndeterminateCode[] = [
  "missing_envelope",
  "envelope_digest_mismatch",
  "unknown_policy_set_hash",
  "no_binding",
  "rate_limit_unevaluable",
];

/** What a verdict that could be reached carries: the call, what was recorded, and what decides now. */
export interface Definite extends RecheckSubject {
  /** What the outcome recorded. */
  readonly recorded: Recorded;
  /** The rule that decides the call now, or the set's default. */
  readonly now: NowRule;
}

/**
 * Recheck's answer for one recorded outcome (SPEC §16.2, §16.3), tagged by `code`. The
 * `newly_*` codes compare classes: `denied` and `rate_limited` are one class, blocked.
 */
export type RecheckVerdict =
  /** The set decides the call now as it was recorded, in class. */
  | (Definite & { readonly code: "unchanged" })
  /** Recorded as not denied (allowed or parked); denied now. */
  | (Definite & { readonly code: "newly_blocked" })
  /** Recorded as not allowed; allowed now. */
  | (Definite & { readonly code: "newly_allowed" })
  /** Recorded as not parked; parked now. */
  | (Definite & { readonly code: "newly_parked" })
  | (RecheckSubject & {
      readonly code: "indeterminate";
      readonly reason: RecheckIndeterminate;
      /** What the outcome recorded, when it could be read. */
      readonly recorded?: Recorded;
      /** The rule that decides now, when one was selected (a rate_limit rule). */
      readonly now?: NowRule;
    });

/** Each verdict's tag, the first word of its report line's clause (SPEC §16.4). */
type RecheckVerdictCode = RecheckVerdict["code"];
/** The verdicts that say the set now decides a call otherwise than recorded. */
export type ChangeCode = Exclude<RecheckVerdictCode, "unchanged" | "indeterminate">;

/**
 * The comparison (SPEC §16.2). `denied` and `rate_limited` are one class, *blocked*: both
 * mean the call did not run, and a set that swaps one refusal for the other has not
 * changed what the call could do. So a recorded `rate_limited` that is denied now is
 * unchanged, and one that is allowed or parked now is newly allowed or newly parked.
 */
export function compareRecorded(recorded: PolicyStatus, now: NowClass): "unchanged" | ChangeCode {
  // Switches, not a match over the pair: this runs once per recorded call.
  switch (now) {
    case "allowed":
      return recorded === "allowed" ? "unchanged" : "newly_allowed";
    case "denied":
      return isBlocked(recorded) ? "unchanged" : "newly_blocked";
    case "pending_approval":
      return recorded === "pending_approval" ? "unchanged" : "newly_parked";
    default:
      return unreachable(now);
  }
}

/** The class *blocked*: the call did not run. */
function isBlocked(status: PolicyStatus): boolean {
  switch (status) {
    case "denied":
    case "rate_limited":
      return true;
    case "allowed":
    case "pending_approval":
      return false;
    default:
      return unreachable(status);
  }
}

/** The verdict clause, in the reference's words (SPEC §16.4). */
export function describeRecheck(verdict: RecheckVerdict): string {
  return match(verdict)
    .with({ code: "unchanged" }, (v) => `unchanged ${v.recorded.status}`)
    .with({ code: "newly_blocked" }, (v) => `newly_blocked was=${v.recorded.status} now=denied`)
    .with({ code: "newly_allowed" }, (v) => `newly_allowed was=${v.recorded.status} now=allowed`)
    .with({ code: "newly_parked" }, (v) => `newly_parked was=${v.recorded.status}`)
    .with({ code: "indeterminate" }, (v) => `indeterminate ${v.reason.code}`)
    .exhaustive(unmatched);
}

/** One report line: `call <call_id|-> session <i> seq <n>: <clause>` (SPEC §16.4). */
export function describeRecheckLine(verdict: RecheckVerdict): string {
  return `call ${verdict.call_id ?? "-"} session ${verdict.session_index} seq ${verdict.seq}: ${describeRecheck(verdict)}`;
}

/**
 * The reason in more words than its token, for a diagnostic stream: the report line itself
 * carries the token only, so that it is a pure function of the two inputs and echoes no
 * digests or paths.
 */
export function explainIndeterminate(reason: RecheckIndeterminate): string {
  return match(reason)
    .with({ code: "missing_envelope" }, (r) =>
      match(r.detail)
        .with({ code: "no_lookup" }, () => `the set has argument matchers and no Envelope was given for request ${r.request_digest}`)
        .with({ code: "missing" }, () => `the Envelope holds no request ${r.request_digest}`)
        .with({ code: "redacted" }, (d) => `request ${r.request_digest} was redacted at ${d.redacted_at}: ${d.reason}`)
        .exhaustive(unmatched),
    )
    .with({ code: "envelope_digest_mismatch" }, (r) => `the Envelope's bytes for request ${r.expected} hash to ${r.found}`)
    .with({ code: "unknown_policy_set_hash" }, (r) =>
      match(r.detail)
        .with({ code: "other_schema" }, (d) => `the outcome is of schema version ${d.schema_version}, not 2`)
        .with({ code: "not_given" }, (d) => `no Policy Set given hashes to ${d.policy_set_hash}`)
        .exhaustive(unmatched),
    )
    .with({ code: "no_binding" }, (r) =>
      match(r.detail)
        .with({ code: "unreadable_outcome" }, (d) => `the outcome cannot be read: ${d.problems.join("; ")}`)
        .with({ code: "unbound" }, (d) => `rule \`${d.rule}\` needs decision_axes.${d.parameter}, which the outcome does not record`)
        .with({ code: "unevaluable" }, (d) => `rule \`${d.rule}\` has an argument matcher the recorded request gives no single reading for`)
        .exhaustive(unmatched),
    )
    .with({ code: "rate_limit_unevaluable" }, (r) => `rule \`${r.rule}\` is a rate limit; its window is state no record carries`)
    .exhaustive(unmatched);
}
