import { unmatched, canonicalize } from "@aegis/format/internal";
import { PolicySetHash } from "@aegis/format";
import { match } from "ts-pattern";
import type { ArgumentMatcher, ArgumentValue, DefaultAction, Limits, NetMatcher, PathMatcher, PolicyVersion, Rule, RuleAction } from "./model.js";

/**
 * `policy_set_hash` (SPEC §6, §15.4): SHA-256 of the canonical form (JCS) of a projection of
 * the validated set. The projection holds what decides and what is recorded, and nothing
 * of the file's layout: comments, key order, quoting, flow or block style, and values
 * written out that equal the default (`priority: 0`, `default: allow`, `version: 1`, the
 * wildcard `*`) do not reach it. Rule order does. Every number is a decimal string, so
 * the projection never leaves the canonical value space (a priority may be negative, a
 * limit may be above 2^53).
 *
 * The reference's projection is not published (ADR 0006); this one is aegis-ts's, and it
 * names itself in its `projection` member so it cannot be mistaken for another scheme.
 */
export const PROJECTION_TAG = "aegis-ts/policy-set/1";

/** A value in the projection: no numbers, since every number is written as a decimal string (SPEC §15.4). */
type Projected = string | boolean | readonly Projected[] | { readonly [key: string]: Projected };

/** What the projection reads of a set: a `PolicySet`, or its parts before the parser seals them with their hash. */
export interface ProjectionSource {
  /** Always projected, as a decimal string: a file without `version` hashes as one that says 1. */
  readonly version: PolicyVersion;
  /** Always projected: a file without `default` hashes as one that says `allow`. */
  readonly default: DefaultAction;
  /** Projected in this order, which is part of the hash. */
  readonly rules: readonly Rule[];
}

/** The projection as a value (SPEC §15.4). */
function projectPolicySet(set: ProjectionSource): { readonly [key: string]: Projected } {
  return {
    projection: PROJECTION_TAG,
    version: String(set.version),
    default: set.default,
    rules: set.rules.map(projectRule),
  };
}

/** The canonical text whose SHA-256 is `policy_set_hash`. */
export function policySetProjection(set: ProjectionSource): string {
  return canonicalize(projectPolicySet(set));
}

/**
 * `policy_set_hash` (SPEC §15.4): SHA-256 of `policySetProjection`. A parsed set
 * already carries it as `hash`.
 */
export function policySetHashOf(set: ProjectionSource): PolicySetHash {
  return PolicySetHash.of(policySetProjection(set));
}

function projectRule(rule: Rule): Projected {
  const m = rule.match;
  const matchers: Record<string, Projected> = {};
  if (m.tool !== undefined) matchers["tool"] = m.tool;
  if (m.capability !== undefined) matchers["capability"] = m.capability;
  if (m.role !== undefined) matchers["role"] = m.role;
  if (m.session !== undefined) matchers["session"] = m.session;
  if (m.fs !== undefined) matchers["fs"] = projectPath(m.fs);
  if (m.net !== undefined) matchers["net"] = projectNet(m.net);
  if (m.args !== undefined) matchers["args"] = m.args.map(projectArg);
  return {
    id: rule.id,
    ...projectAction(rule.action),
    priority: String(rule.priority),
    ...(rule.reason === undefined ? {} : { reason: rule.reason }),
    match: matchers,
  };
}

function projectAction(action: RuleAction): Record<string, Projected> {
  return match(action)
    .with({ code: "allow" }, (a) => ({ action: a.code, ...projectLimits(a.limits) }))
    .with({ code: "deny" }, (a) => ({ action: a.code }))
    .with({ code: "pending_approval" }, (a) => ({ action: a.code }))
    .with({ code: "rate_limit" }, (a) => ({
      action: a.code,
      rate: { max: String(a.rate.max), per_seconds: a.rate.per_seconds.toString() },
      ...projectLimits(a.limits),
    }))
    .exhaustive(unmatched);
}

function projectLimits(limits: Limits | undefined): Record<string, Projected> {
  if (limits === undefined) return {};
  const out: Record<string, Projected> = {};
  if (limits.max_memory_bytes !== undefined) out["max_memory_bytes"] = limits.max_memory_bytes.toString();
  if (limits.max_wall_ms !== undefined) out["max_wall_ms"] = limits.max_wall_ms.toString();
  if (limits.max_output_bytes !== undefined) out["max_output_bytes"] = limits.max_output_bytes.toString();
  return Object.keys(out).length === 0 ? {} : { limits: out };
}

function projectPath(fs: PathMatcher): Projected {
  return match(fs)
    .with({ code: "exact" }, (p) => ({ path: p.path }))
    .with({ code: "prefix" }, (p) => ({ path_prefix: p.prefix }))
    .with({ code: "glob" }, (p) => ({ path_glob: p.glob }))
    .exhaustive(unmatched);
}

function projectNet(net: NetMatcher): Projected {
  const host =
    net.host === undefined
      ? {}
      : match(net.host)
          // Hosts match without regard to ASCII case (§15.2), so they hash that way too.
          .with({ code: "exact" }, (h) => ({ host: asciiLower(h.host) }))
          .with({ code: "suffix" }, (h) => ({ host_suffix: asciiLower(h.suffix) }))
          .exhaustive(unmatched);
  const port =
    net.port === undefined
      ? {}
      : match(net.port)
          .with({ code: "list" }, (p) => ({ ports: p.ports.map(String) }))
          .with({ code: "range" }, (p) => ({ port_range: { min: String(p.min), max: String(p.max) } }))
          .exhaustive(unmatched);
  return { ...host, ...port };
}

function projectArg(arg: ArgumentMatcher): Projected {
  const test = match(arg.test)
    .with({ code: "exact" }, (t) => ({ exact: projectValue(t.value) }))
    .with({ code: "prefix" }, (t) => ({ prefix: t.prefix }))
    .with({ code: "exists" }, (t) => ({ exists: t.exists }))
    .exhaustive(unmatched);
  return { pointer: arg.pointer, ...test };
}

/** Typed, so that the string "5" and the integer 5 project differently. */
function projectValue(value: ArgumentValue): Projected {
  return match(value)
    .with({ code: "string" }, (v) => ({ string: v.value }))
    .with({ code: "integer" }, (v) => ({ integer: v.value.toString() }))
    .with({ code: "boolean" }, (v) => ({ boolean: v.value }))
    .exhaustive(unmatched);
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
