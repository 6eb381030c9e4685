import { unmatched, unreachable } from "@aegis/format/internal";
import { type JsonValue, type DecisionAxes } from "@aegis/format";
import { match } from "ts-pattern";
import type { ArgumentMatcher, DefaultAction, HostMatcher, PathMatcher, PolicySet, PortMatcher, Rule } from "./model.js";
import { isJsonInteger, readsAsInteger, resolvePointer } from "./pointer.js";

/**
 * Rule selection (SPEC §15.3), shared by `decide` and `recheck` so that a recorded decision
 * is re-evaluated by the very code that made it:
 *
 * 1. any matching `deny` wins;
 * 2. otherwise the matching rule with the highest (specificity, priority);
 * 3. a full tie keeps the rule that comes first in the file;
 * 4. nothing matches: the set's default.
 *
 * A rule can also be *unbound*: it needs a parameter the call did not bind (`decision_axes.fs`
 * or `.net` for its fs or net matcher, or the request bytes for an argument matcher) while
 * every parameter it could test holds. Selection then cannot be sure of its answer. It is
 * unsure only when the unbound rule, had it matched, would have won (SPEC §15.3): an
 * unbound `allow` under a matching `deny` changes nothing.
 */

/** What selection sees of a call: the tool, and the axes the Chain records for it. */
export interface CallView {
  readonly tool_id: string;
  readonly axes: DecisionAxes;
}

/** The request JSON, when it is to hand. `document` is undefined when the bytes are not JSON. */
export type RequestView = { readonly code: "available"; readonly document: JsonValue | undefined } | { readonly code: "unavailable" };

/**
 * A parameter a rule needed and the call did not bind: `fs` or `net` absent from the axes,
 * the request bytes not to hand, or (`arguments`) an argument matcher the bytes at hand
 * give no single reading for (SPEC §15.2).
 */
export type UnboundParameter = "fs" | "net" | "request" | "arguments";

/** The rule that decided, or the set's default. */
export type Matched = { readonly code: "rule"; readonly rule: Rule } | { readonly code: "default"; readonly action: DefaultAction };

/** The id of the rule that decided, or undefined when the set's default did. */
export function matchedRuleId(matched: Matched): string | undefined {
  return matched.code === "rule" ? matched.rule.id : undefined;
}

export type Selection =
  | { readonly code: "selected"; readonly matched: Matched }
  | {
      readonly code: "unbound";
      /** The first unbound rule that would win, preferring one that lacks a Chain parameter. */
      readonly rule: Rule;
      readonly parameter: UnboundParameter;
      /**
       * Whether some rule that would win lacks the request bytes: then the bytes may settle
       * the call even when a rule lacks a Chain parameter, because they can rule it out, or
       * make a rule match that outranks it.
       */
      readonly requestWouldHelp: boolean;
    };

/** A rule's fit; when unbound, every parameter it lacks, Chain parameters first. */
type Fit = "match" | "no_match" | readonly [UnboundParameter, ...UnboundParameter[]];

interface Candidate {
  readonly rule: Rule;
  readonly index: number;
}

export function select(set: PolicySet, call: CallView, request: RequestView): Selection {
  let deny: Candidate | undefined;
  let other: Candidate | undefined;
  const unbound: { readonly candidate: Candidate; readonly missing: readonly [UnboundParameter, ...UnboundParameter[]] }[] = [];
  set.rules.forEach((rule, index) => {
    const fit = fitOf(rule, call, request);
    const candidate = { rule, index };
    if (fit === "no_match") return;
    if (fit !== "match") unbound.push({ candidate, missing: fit });
    else if (rule.action.code === "deny") deny = better(deny, candidate);
    else other = better(other, candidate);
  });

  // An unbound rule matters only if, had it matched, it would have won. A parameter of
  // the Chain (fs, net) missing is reported before the request bytes missing: the first
  // is final, the second an Envelope may still supply.
  const relevant = unbound.filter(({ candidate }) =>
    candidate.rule.action.code === "deny" ? beats(candidate, deny) : deny === undefined && beats(candidate, other),
  );
  const blocking = relevant.find((u) => u.missing[0] !== "request") ?? relevant[0];
  if (blocking !== undefined) {
    return {
      code: "unbound",
      rule: blocking.candidate.rule,
      parameter: blocking.missing[0],
      requestWouldHelp: relevant.some((u) => u.missing.includes("request")),
    };
  }

  const winner = deny ?? other;
  return { code: "selected", matched: winner === undefined ? { code: "default", action: set.default } : { code: "rule", rule: winner.rule } };
}

/** Does `challenger` win against `incumbent`? Higher (specificity, priority); a tie keeps the earlier rule. */
function beats(challenger: Candidate, incumbent: Candidate | undefined): boolean {
  if (incumbent === undefined) return true;
  const a = challenger.rule;
  const b = incumbent.rule;
  if (a.specificity !== b.specificity) return a.specificity > b.specificity;
  if (a.priority !== b.priority) return a.priority > b.priority;
  return challenger.index < incumbent.index;
}

function better(incumbent: Candidate | undefined, challenger: Candidate): Candidate {
  return beats(challenger, incumbent) ? challenger : (incumbent ?? challenger);
}

/**
 * One rule against one call. Every parameter that is bound is tested first: one that fails
 * settles `no_match` whatever is unbound. Then a missing Chain parameter, then missing
 * request bytes.
 */
function fitOf(rule: Rule, call: CallView, request: RequestView): Fit {
  const m = rule.match;
  const axes = call.axes;
  // The reference's axes: a matcher on an axis the call did not assert does not match
  // (a role gate fires only when a role is asserted).
  if (m.tool !== undefined && call.tool_id !== m.tool) return "no_match";
  if (m.capability !== undefined && axes.capability !== m.capability) return "no_match";
  if (m.role !== undefined && axes.role !== m.role) return "no_match";
  if (m.session !== undefined && axes.session !== m.session) return "no_match";

  // Derived parameters: the Chain omits fs or net when the call did not resolve to exactly
  // one resource (SPEC §5.3), so their absence means "not known", not "none".
  const missing: UnboundParameter[] = [];
  if (m.fs !== undefined) {
    if (axes.fs === undefined) missing.push("fs");
    else if (!pathMatches(m.fs, axes.fs.path_canonical)) return "no_match";
  }
  if (m.net !== undefined) {
    if (axes.net === undefined) missing.push("net");
    else {
      if (m.net.host !== undefined && !hostMatches(m.net.host, axes.net.host)) return "no_match";
      if (m.net.port !== undefined && !portMatches(m.net.port, axes.net.port)) return "no_match";
    }
  }
  if (m.args !== undefined) {
    if (request.code === "unavailable") missing.push("request");
    else {
      const fits = m.args.map((arg) => argumentFit(arg, request.document));
      if (fits.includes("no_match")) return "no_match";
      // A matcher that cannot be evaluated is not "no match": the rule fails closed (SPEC §15.5).
      if (fits.includes("unevaluable")) missing.push("arguments");
    }
  }
  const [first, ...rest] = missing;
  return first === undefined ? "match" : [first, ...rest];
}

// The matchers below are switches, not matches: they run for every rule on every call rechecked.
function pathMatches(matcher: PathMatcher, path: string): boolean {
  switch (matcher.code) {
    case "exact":
      return path === matcher.path;
    case "prefix":
      return path.startsWith(matcher.prefix);
    case "glob":
      return matcher.matcher.test(path);
    default:
      return unreachable(matcher);
  }
}

/** Host names compare without regard to ASCII case (RFC 4343); nothing else is folded. */
function hostMatches(matcher: HostMatcher, host: string): boolean {
  const h = asciiLower(host);
  switch (matcher.code) {
    case "exact":
      return h === asciiLower(matcher.host);
    case "suffix":
      return h.endsWith(asciiLower(matcher.suffix));
    default:
      return unreachable(matcher);
  }
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/gu, (c) => c.toLowerCase());
}

function portMatches(matcher: PortMatcher, port: number): boolean {
  switch (matcher.code) {
    case "list":
      return matcher.ports.includes(port);
    case "range":
      return port >= matcher.min && port <= matcher.max;
    default:
      return unreachable(matcher);
  }
}

/**
 * One argument matcher against the request (SPEC §15.2). Bytes that are not JSON cannot be
 * evaluated at all; an `exact` integer cannot be evaluated against a number written
 * otherwise (`1000.0`, `1e3`, `-0`, an integer past 2^53) that a reader of doubles takes for
 * the same number: a server would act on that number, so "not equal" would be a guess.
 */
function argumentFit(arg: ArgumentMatcher, document: JsonValue | undefined): "match" | "no_match" | "unevaluable" {
  if (document === undefined) return "unevaluable";
  const value = resolvePointer(document, arg.tokens);
  const holds = (b: boolean): "match" | "no_match" => (b ? "match" : "no_match");
  return match(arg.test)
    .with({ code: "exists" }, (t) => holds((value !== undefined) === t.exists))
    .with({ code: "prefix" }, (t) => holds(typeof value === "string" && value.startsWith(t.prefix)))
    .with({ code: "exact" }, (t) =>
      value === undefined
        ? "no_match"
        : match(t.value)
            .with({ code: "string" }, (v) => holds(value === v.value))
            .with({ code: "boolean" }, (v) => holds(value === v.value))
            .with({ code: "integer" }, (v) => (isJsonInteger(value, v.value) ? "match" : readsAsInteger(value, v.value) ? "unevaluable" : "no_match"))
            .exhaustive(unmatched),
    )
    .exhaustive(unmatched);
}
