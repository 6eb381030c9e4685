import type { Glob } from "./glob.js";
import type { PolicySetHash } from "@aegis/format";

/**
 * The validated Policy Set (SPEC §15). Only {@link parsePolicySet} makes one: the brand is a
 * required unique-symbol property, so a hand-built object whose `hash` was never computed
 * from its rules does not type-check as a `PolicySet`.
 */
declare const validated: unique symbol;

/** A version this build reads: 1, the reference's format, or 2, the aegis-ts extension (SPEC §15.1, §15.2). Any other is refused. */
export type PolicyVersion = 1 | 2;

/** The verdict when no rule matches a call: the file's `default`, `allow` when it gives none (SPEC §15.1). */
export type DefaultAction = "allow" | "deny";

/** A fixed window: at most `max` calls per `per_seconds` (SPEC §15.6). Both are above 0. */
export interface RateSpec {
  /** An unsigned 32-bit integer, as the reference reads it. */
  readonly max: number;
  /** An unsigned 64-bit integer: kept as a bigint so no value is rounded. */
  readonly per_seconds: bigint;
}

/**
 * Ceilings an allowing rule imposes on the call it lets through (unsigned 64-bit each).
 * This package reads them and hands them back in a decision; holding the call to them is
 * for whatever runs it.
 */
export interface Limits {
  /** Memory the call may use, in bytes. */
  readonly max_memory_bytes?: bigint;
  /** Wall-clock time the call may take, in milliseconds. */
  readonly max_wall_ms?: bigint;
  /** Output the call may produce, in bytes. */
  readonly max_output_bytes?: bigint;
}

/**
 * What a rule does when it wins. `rate` lives inside the rate_limit variant, so a rule
 * that carries a rate and is not a rate limit cannot be built (SPEC §15.1).
 */
export type RuleAction =
  | { readonly code: "allow"; readonly limits?: Limits }
  | { readonly code: "deny" }
  | { readonly code: "rate_limit"; readonly rate: RateSpec; readonly limits?: Limits }
  | { readonly code: "pending_approval" };

/** A rule's `action` as the file writes it. */
export type RuleKind = RuleAction["code"];

/** Over `decision_axes.fs.path_canonical` (SPEC §15.2). */
export type PathMatcher =
  | { readonly code: "exact"; readonly path: string }
  | { readonly code: "prefix"; readonly prefix: string }
  | { readonly code: "glob"; readonly glob: string; readonly matcher: Glob };

/** Over `decision_axes.net.host`, compared as written in the record, without regard to ASCII case (SPEC §15.2). */
export type HostMatcher = { readonly code: "exact"; readonly host: string } | { readonly code: "suffix"; readonly suffix: string };

/** Over `decision_axes.net.port` (SPEC §15.2). */
export type PortMatcher = { readonly code: "list"; readonly ports: readonly number[] } | { readonly code: "range"; readonly min: number; readonly max: number };

/** A version 2 rule's `net` matcher (SPEC §15.2): it has at least one of the two, and each it has must hold. */
export interface NetMatcher {
  /** From the file's `host` or `host_suffix`. */
  readonly host?: HostMatcher;
  /** From the file's `ports` or `port_range`. */
  readonly port?: PortMatcher;
}

/** A value an argument matcher compares with: JSON's string, integer or boolean. */
export type ArgumentValue =
  | { readonly code: "string"; readonly value: string }
  | { readonly code: "integer"; readonly value: bigint }
  | { readonly code: "boolean"; readonly value: boolean };

/** What an argument matcher requires of the value at its pointer (SPEC §15.2). */
export type ArgumentTest =
  /** A JSON value of the same type, equal to it; an integer is judged on the JSON text, so `1000.0` is not `1000`. */
  | { readonly code: "exact"; readonly value: ArgumentValue }
  /** A JSON string that starts with `prefix`. */
  | { readonly code: "prefix"; readonly prefix: string }
  /** Whether the pointer names a value at all. */
  | { readonly code: "exists"; readonly exists: boolean };

/** One test on the verbatim request JSON, at an RFC 6901 pointer (SPEC §15.2). */
export interface ArgumentMatcher {
  /** The JSON Pointer as the file writes it: what the projection hashes (SPEC §15.4). */
  readonly pointer: string;
  /** The pointer's reference tokens, unescaped. */
  readonly tokens: readonly string[];
  /** What the value at the pointer must satisfy. */
  readonly test: ArgumentTest;
}

/**
 * What a rule matches on. An absent matcher matches anything; the wildcard `*` of the
 * file is read as absent, because it means the same thing (SPEC §15.3).
 */
export interface RuleMatchers {
  /** Must equal the call's `tool_id`. */
  readonly tool?: string;
  /** Must equal `decision_axes.capability`; does not hold for a call that asserts none. */
  readonly capability?: string;
  /** Must equal `decision_axes.role`; does not hold for a call that asserts none. */
  readonly role?: string;
  /** Version 2 only. */
  readonly session?: string;
  /** Version 2 only. */
  readonly fs?: PathMatcher;
  /** Version 2 only. */
  readonly net?: NetMatcher;
  /** Version 2 only; every matcher in the list must hold. */
  readonly args?: readonly ArgumentMatcher[];
}

/** One rule of a validated Policy Set (SPEC §15.1), as selection reads it (SPEC §15.3). */
export interface Rule {
  /** Unique within the set; what `decision_axes.matched_rule` records when this rule decides. */
  readonly id: string;
  /** What the rule does when it wins, with the settings only that action has. */
  readonly action: RuleAction;
  /** The rule matches a call when every matcher it has holds. */
  readonly match: RuleMatchers;
  /** A signed 32-bit integer; 0 when the file gives none. */
  readonly priority: number;
  /** Recorded, when this rule denies or rate-limits a call, in place of the generated words (SPEC §15.5). */
  readonly reason?: string;
  /** How many non-wildcard matchers the rule has (SPEC §15.3). */
  readonly specificity: number;
}

/**
 * A Policy Set, read and validated (SPEC §15): what `decide` decides live calls under and
 * `recheck` re-evaluates recorded ones under. Only the parser makes one (`parsePolicySet`,
 * `tryParsePolicySet`, `loadPolicySet`), so its `hash` is always that of its rules.
 */
export interface PolicySet {
  /** The brand only the parser sets: a hand-built object does not type-check as a set. */
  readonly [validated]: true;
  /** The file's `version`; 1 when it gives none. */
  readonly version: PolicyVersion;
  /** The verdict when no rule matches. */
  readonly default: DefaultAction;
  /** In the file's order, which decides a full tie (SPEC §15.3) and is part of the hash. */
  readonly rules: readonly Rule[];
  /** SHA-256 of the canonical projection (SPEC §15.4): what an outcome records. */
  readonly hash: PolicySetHash;
}

/** Seal a validated set. Only the parser calls this. */
export function sealPolicySet(set: Omit<PolicySet, typeof validated>): PolicySet {
  return set as PolicySet;
}

/** Specificity is the number of matchers that constrain (SPEC §15.3). */
export function specificityOf(match: RuleMatchers): number {
  let n = 0;
  if (match.tool !== undefined) n++;
  if (match.capability !== undefined) n++;
  if (match.role !== undefined) n++;
  if (match.session !== undefined) n++;
  if (match.fs !== undefined) n++;
  if (match.net?.host !== undefined) n++;
  if (match.net?.port !== undefined) n++;
  n += match.args?.length ?? 0;
  return n;
}

/**
 * Whether deciding under `set` can need the verbatim request bytes (SPEC §15.2): true when
 * any rule has an argument matcher. A static property of the set, known before any call.
 */
export function needsEnvelope(set: PolicySet): boolean {
  return set.rules.some((rule) => rule.match.args !== undefined);
}

/** Whether a live `decide` under `set` can need rate-limit state (SPEC §15.6). */
export function needsRateWindows(set: PolicySet): boolean {
  return set.rules.some((rule) => rule.action.code === "rate_limit");
}
