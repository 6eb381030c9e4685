import { unmatched } from "@aegis/format/internal";
import { randomUUID } from "node:crypto";
import type { DecisionAxes, PolicyOutcome, PolicySetHash } from "@aegis/format";
import { match } from "ts-pattern";
import { parseRequestJson } from "./envelope-read.js";
import type { Limits, PolicySet, Rule } from "./model.js";
import type { RateWindows } from "./rate-windows.js";
import { select, type Matched, type RequestView, type UnboundParameter } from "./select.js";

/**
 * `decide` (SPEC §15.5): the live verdict on one call, and exactly what to record for it.
 * The recorded `decision_axes` are the axes `decide` was given plus the rule that decided,
 * so a recheck under the same set re-reads the inputs the decision was made from.
 */

/** The axes of a call as the caller asserts them: `decision_axes` without `matched_rule`. */
export type CallAxes = Omit<DecisionAxes, "matched_rule">;

/** One call, as {@link decide} needs it (SPEC §15.5). */
export interface DecisionRequest {
  /** The tool called: what a rule's `tool` matcher compares, and part of a rate window's key. */
  readonly tool_id: string;
  /** What the caller asserts of the call; none when absent. Members the Chain does not define are dropped. */
  readonly axes?: CallAxes;
  /**
   * The verbatim request bytes. Needed only when the set has argument matchers
   * (`needsEnvelope`); without them such a rule is unbound and the call is denied.
   */
  readonly request?: Uint8Array;
}

/** What a live decision may change or consult. The caller owns it (SPEC §15.6). */
export interface LiveState {
  /** Rate-limit windows; required when a `rate_limit` rule can be selected. */
  readonly windows?: RateWindows;
  /** Milliseconds on a clock that does not go backwards. Default `performance.now()`. */
  readonly now?: () => number;
  /** The id of a new park. Default `apr-` and a random UUID (SPEC §15.7). */
  readonly mintApprovalId?: () => string;
}

/** What every {@link Decision} carries: the rule, the reason, and the three members the call's outcome records (SPEC §15.5). */
export interface DecisionCommon {
  /** The rule that decided, or the set's default. */
  readonly matched: Matched;
  /** Why, in words; for a denial or a rate limit, the reason the outcome records. */
  readonly reason: string;
  /** The `policy` member to record. */
  readonly policy: PolicyOutcome;
  /** The `decision_axes` member to record. */
  readonly decision_axes: DecisionAxes;
  /** The `policy_set_hash` member to record. */
  readonly policy_set_hash: PolicySetHash;
}

/** Why a call was denied. */
export type DenialCause =
  | { readonly code: "rule" }
  | { readonly code: "default" }
  /** A rule needed a parameter the call did not bind; the call fails closed (SPEC §15.5). */
  | { readonly code: "unbound"; readonly parameter: UnboundParameter };

/** The live verdict on one call, with what to record for it (SPEC §15.5). */
export type Decision =
  /** The call may run, under `limits` when the rule that let it through has them. */
  | (DecisionCommon & { readonly code: "allowed"; readonly limits?: Limits })
  /** The call may not run; `cause` says whether a rule, the default or an unbound parameter refused it. */
  | (DecisionCommon & { readonly code: "denied"; readonly cause: DenialCause })
  /** Parked until a human answers; `approval_id` names the park (SPEC §15.7). */
  | (DecisionCommon & { readonly code: "pending_approval"; readonly approval_id: string })
  /** Refused: the rule's window is full (SPEC §15.6). */
  | (DecisionCommon & { readonly code: "rate_limited" });

/**
 * Decide one call under `set`.
 *
 * @throws TypeError when the selected rule is a `rate_limit` rule and `live.windows` was
 * not given: counting is state, and this package keeps none of its own
 * (`needsRateWindows` says ahead of time whether a set can need it).
 * @example
 * ```ts
 * const windows = new RateWindows();
 * const d = decide(set, { tool_id: "fs.read", axes: { role: "agent" } }, { windows });
 * await writer.outcome({ ...rest, policy_set_hash: d.policy_set_hash, policy: d.policy, decision_axes: d.decision_axes });
 * ```
 */
export function decide(set: PolicySet, request: DecisionRequest, live?: LiveState): Decision {
  const axes = recordedAxes(request.axes ?? {});
  const call = { tool_id: request.tool_id, axes };
  const selection = select(set, call, requestView(request.request));
  const base = (matched: Matched) => ({
    matched,
    policy_set_hash: set.hash,
    decision_axes: matched.code === "rule" ? { ...axes, matched_rule: matched.rule.id } : axes,
  });

  if (selection.code === "unbound") {
    const reason =
      selection.parameter === "arguments"
        ? `rule \`${selection.rule.id}\` has an argument matcher that cannot be evaluated on this request (it is not JSON, or a number is written other than as the integer it equals)`
        : `rule \`${selection.rule.id}\` needs ${describeParameter(selection.parameter)}, which this call did not bind`;
    return {
      code: "denied",
      cause: { code: "unbound", parameter: selection.parameter },
      reason,
      policy: { status: "denied", reason },
      ...base({ code: "rule", rule: selection.rule }),
    };
  }

  const matched = selection.matched;
  if (matched.code === "default") {
    return match(matched.action)
      .with("allow", (): Decision => ({ code: "allowed", reason: "no matching rule (default allow)", policy: { status: "allowed" }, ...base(matched) }))
      .with("deny", (): Decision => {
        const reason = "no matching rule (default deny)";
        return { code: "denied", cause: { code: "default" }, reason, policy: { status: "denied", reason }, ...base(matched) };
      })
      .exhaustive(unmatched);
  }
  return decideByRule(matched.rule, call.tool_id, axes, base(matched), live);
}

function decideByRule(rule: Rule, toolId: string, axes: CallAxes, base: Omit<DecisionCommon, "reason" | "policy">, live: LiveState | undefined): Decision {
  return match(rule.action)
    .with({ code: "allow" }, (a): Decision => ({
      code: "allowed",
      reason: rule.reason ?? `allowed by rule \`${rule.id}\``,
      policy: { status: "allowed" },
      ...(a.limits === undefined ? {} : { limits: a.limits }),
      ...base,
    }))
    .with({ code: "deny" }, (): Decision => {
      const reason = rule.reason ?? `denied by rule \`${rule.id}\``;
      return { code: "denied", cause: { code: "rule" }, reason, policy: { status: "denied", reason }, ...base };
    })
    .with({ code: "pending_approval" }, (): Decision => {
      // A call resumed under an approval carries `approval_ref`: the approval is what the
      // park asked for, so it is let through (SPEC §15.5). recheck reads it the same way.
      if (axes.approval_ref !== undefined) {
        return { code: "allowed", reason: `approved under ${axes.approval_ref}`, policy: { status: "allowed" }, ...base };
      }
      const approvalId = (live?.mintApprovalId ?? mintApprovalId)();
      return {
        code: "pending_approval",
        approval_id: approvalId,
        reason: rule.reason ?? `held for approval by rule \`${rule.id}\``,
        policy: { status: "pending_approval", approval_id: approvalId },
        ...base,
      };
    })
    .with({ code: "rate_limit" }, (a): Decision => {
      const windows = live?.windows;
      if (windows === undefined) {
        throw new TypeError(`decide: rule \`${rule.id}\` is a rate_limit rule; pass a RateWindows as live.windows to count its window`);
      }
      const now = (live?.now ?? (() => performance.now()))();
      // Per rule, per tool, per session, as the reference keys its windows; a call with
      // no session shares the tool's window.
      const key = JSON.stringify([rule.id, toolId, axes.session ?? toolId]);
      if (windows.admit(key, a.rate, now)) {
        return {
          code: "allowed",
          reason: rule.reason ?? `within the rate limit of rule \`${rule.id}\``,
          policy: { status: "allowed" },
          ...(a.limits === undefined ? {} : { limits: a.limits }),
          ...base,
        };
      }
      const reason = rule.reason ?? `rate limit exceeded for \`${rule.id}\` (${a.rate.max} per ${a.rate.per_seconds}s)`;
      return { code: "rate_limited", reason, policy: { status: "rate_limited", reason }, ...base };
    })
    .exhaustive(unmatched);
}

/**
 * An approval id that is unique across processes and restarts: the reference's
 * per-process counter (`apr-<rule>-<tool>-<n>`) repeats after a restart, and two parks
 * with one id would make a `decision` Line ambiguous (SPEC §15.7).
 */
export function mintApprovalId(): string {
  return `apr-${randomUUID()}`;
}

/**
 * The words for an unbound parameter (`decision_axes.fs`, `decision_axes.net`, or "the
 * request bytes"), as a fail-closed denial's reason names it (SPEC §15.5).
 */
function describeParameter(parameter: UnboundParameter): string {
  return match(parameter)
    .with("fs", () => "decision_axes.fs")
    .with("net", () => "decision_axes.net")
    .with("request", () => "the request bytes")
    .with("arguments", () => "a single reading of the request for its argument matchers")
    .exhaustive(unmatched);
}

/** Only the members the Chain defines, so a caller's extra properties never reach a Line. */
function recordedAxes(axes: CallAxes): CallAxes {
  const out: { -readonly [K in keyof CallAxes]: CallAxes[K] } = {};
  if (axes.capability !== undefined) out.capability = axes.capability;
  if (axes.role !== undefined) out.role = axes.role;
  if (axes.session !== undefined) out.session = axes.session;
  if (axes.approval_ref !== undefined) out.approval_ref = axes.approval_ref;
  if (axes.fs !== undefined) out.fs = { path_raw: axes.fs.path_raw, path_canonical: axes.fs.path_canonical };
  if (axes.net !== undefined) out.net = { host: axes.net.host, port: axes.net.port };
  return out;
}

function requestView(bytes: Uint8Array | undefined): RequestView {
  if (bytes === undefined) return { code: "unavailable" };
  return { code: "available", document: parseRequestJson(bytes) };
}
