import { join } from "node:path";
import { RequestDigest, type EnvelopeRead } from "@aegis/format";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RateWindows, parsePolicySet, recheck, type CallAxes, type Decision, type RecheckVerdict } from "../src/index.js";
import { fakeEnvelope, requestOf, tempDir, writeSession, type TestCall } from "./support/records.js";

/**
 * The property that makes recheck worth having (SPEC §15.5, §16.2): a record written by a
 * runtime that called `decide`, rechecked under the same set, reads back unchanged, call for
 * call. The exceptions are exactly the calls whose decision no record can reproduce: those
 * a rate_limit rule decided (its window is not recorded), and those `decide` failed closed
 * because a rule that would have won needed a Chain parameter the call did not bind.
 */

const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const TOOLS = ["a", "b", "c"] as const;

function ruleArb(version: 1 | 2) {
  const v2 = version === 2;
  return fc.record({
    action: pick("allow", "deny", "rate_limit", "pending_approval"),
    tool: maybe(pick<string>(...TOOLS, "*")),
    capability: maybe(pick("x", "y", "*")),
    role: maybe(pick("ops", "dev", "*")),
    priority: maybe(fc.integer({ min: -2, max: 2 })),
    reason: maybe(pick("because", "a reason: with colon")),
    rate: fc.record({ max: fc.integer({ min: 1, max: 3 }), per_seconds: fc.integer({ min: 1, max: 100 }) }),
    limits: maybe(fc.record({ max_wall_ms: fc.integer({ min: 0, max: 10_000 }) })),
    session: v2 ? maybe(pick("s1", "s2", "*")) : fc.constant(undefined),
    fs: v2
      ? maybe(fc.oneof(pick({ path: "/w/a" }), pick({ path_prefix: "/w/" }), pick({ path_glob: "/w/**/*.md" }), pick({ path_prefix: "/etc/" })))
      : fc.constant(undefined),
    net: v2
      ? maybe(
          fc.record({
            host: maybe(fc.oneof(pick({ host: "api.example.com" }), pick({ host_suffix: ".example.com" }))),
            port: maybe(fc.oneof(pick({ ports: [443] }), pick({ ports: [80, 8080] }), pick({ port_range: { min: 1, max: 1024 } }))),
          }),
        )
      : fc.constant(undefined),
    args: v2
      ? maybe(
          fc.array(
            fc.oneof(
              pick({ pointer: "/k", exact: "v" }, { pointer: "/k", prefix: "v" }, { pointer: "/n", exact: 1 }, { pointer: "/flag", exact: true }),
              fc.record({ pointer: pick("/k", "/n", "/missing"), exists: fc.boolean() }),
            ),
            { minLength: 1, maxLength: 2 },
          ),
        )
      : fc.constant(undefined),
  });
}

type RuleDraft = ReturnType<typeof ruleArb> extends fc.Arbitrary<infer T> ? T : never;

/** The set as YAML: every rule one JSON object in flow style, which YAML 1.2 reads as written. */
function yamlOf(version: 1 | 2, defaultAction: string, rules: readonly RuleDraft[]): string {
  const lines = [`version: ${version}`, `default: ${defaultAction}`, "rules:"];
  rules.forEach((r, i) => {
    const rule: Record<string, unknown> = { id: `r${i}`, action: r.action };
    for (const key of ["tool", "capability", "role", "priority", "reason", "session", "fs", "args"] as const) {
      if (r[key] !== undefined) rule[key] = r[key];
    }
    if (r.net !== undefined && (r.net.host !== undefined || r.net.port !== undefined)) rule["net"] = { ...r.net.host, ...r.net.port };
    if (r.action === "rate_limit") rule["rate"] = r.rate;
    if (r.limits !== undefined && (r.action === "allow" || r.action === "rate_limit")) rule["limits"] = r.limits;
    lines.push(`  - ${JSON.stringify(rule)}`);
  });
  if (rules.length === 0) lines[2] = "rules: []";
  return `${lines.join("\n")}\n`;
}

const policyArb = fc.integer({ min: 1, max: 2 }).chain((n) => {
  const version = n === 1 ? 1 : 2;
  return fc.record({ default: pick("allow", "deny"), rules: fc.array(ruleArb(version), { maxLength: 6 }) }).map((p) => yamlOf(version, p.default, p.rules));
});

function callsArb(bindAll: boolean) {
  const axes = fc.record({
    capability: maybe(pick("x", "y")),
    role: maybe(pick("ops", "dev")),
    session: maybe(pick("s1", "s2")),
    approval_ref: fc.option(pick("apr-1"), { nil: undefined, freq: 6 }),
    fs: (bindAll ? (a: fc.Arbitrary<string>) => a : maybe)(pick("/w/a", "/w/x/y.md", "/etc/passwd")),
    net: (bindAll ? <T>(a: fc.Arbitrary<T>) => a : maybe)(
      fc.record({ host: pick("api.example.com", "example.com", "x.example.com"), port: pick(80, 443, 8080, 2000) }),
    ),
  });
  const request = fc.record({ k: maybe(pick("v", "vv", "w")), n: maybe(pick(1, 2)), flag: maybe(fc.boolean()) });
  return fc.array(fc.record({ tool: pick("a", "b", "c", "d"), axes, request }), { minLength: 1, maxLength: 8 }).map((drafts) =>
    drafts.map((d, i): TestCall => {
      const a: { -readonly [K in keyof CallAxes]: CallAxes[K] } = {};
      if (d.axes.capability !== undefined) a.capability = d.axes.capability;
      if (d.axes.role !== undefined) a.role = d.axes.role;
      if (d.axes.session !== undefined) a.session = d.axes.session;
      if (d.axes.approval_ref !== undefined) a.approval_ref = d.axes.approval_ref;
      if (d.axes.fs !== undefined) a.fs = { path_raw: d.axes.fs, path_canonical: d.axes.fs };
      if (d.axes.net !== undefined) a.net = d.axes.net;
      return { call_id: `call-${i}`, tool_id: d.tool, axes: a, request: new TextEncoder().encode(JSON.stringify(d.request)) };
    }),
  );
}

/** What recheck must say of a call, given what `decide` said live. */
function expected(decision: Decision): string {
  if (decision.code === "denied" && decision.cause.code === "unbound") return "indeterminate no_binding";
  if (decision.matched.code === "rule" && decision.matched.rule.action.code === "rate_limit") return "indeterminate rate_limit_unevaluable";
  return `unchanged ${decision.policy.status}`;
}

function clause(v: RecheckVerdict): string {
  return v.code === "indeterminate" ? `indeterminate ${v.reason.code}` : `${v.code} ${v.recorded.status}`;
}

async function roundTrip(yaml: string, calls: readonly TestCall[], allBound: boolean): Promise<void> {
  const set = parsePolicySet(yaml);
  const path = join(tempDir(), "p.aarl");
  // A clock that stands still, so windows fill and some calls are rate_limited.
  const decisions = await writeSession(path, set, calls, { windows: new RateWindows(), now: () => 0 });
  const envelope = fakeEnvelope(new Map(calls.map((c): [string, EnvelopeRead] => [RequestDigest.of(requestOf(c)), { code: "present", bytes: requestOf(c) }])));
  const verdicts: RecheckVerdict[] = [];
  for await (const v of recheck(path, { code: "policy", policy: set }, { envelope })) verdicts.push(v);
  expect(verdicts.map((v) => v.call_id)).toEqual(calls.map((c) => c.call_id));
  if (allBound) {
    const allowed = new Set(["unchanged", "indeterminate rate_limit_unevaluable"]);
    expect(verdicts.filter((v) => !allowed.has(v.code === "indeterminate" ? clause(v) : v.code))).toEqual([]);
  }
  verdicts.forEach((v, i) => {
    const d = decisions[i];
    if (d === undefined) throw new Error("a verdict without a decision");
    expect(clause(v), `${calls[i]?.call_id} under\n${yaml}`).toBe(expected(d));
    if (v.code === "unchanged") {
      expect(v.now).toEqual(d.matched.code === "rule" ? { kind: "rule", id: d.matched.rule.id } : { kind: "default" });
      expect(v.recorded.matched_rule).toBe(d.decision_axes.matched_rule);
    }
  });
}

describe("decide, record, recheck under the same set (SPEC §16.2)", () => {
  it("[M15.5] [M16.2] calls that bind every parameter: only unchanged, and rate_limit_unevaluable where a rate_limit rule applies", async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, callsArb(true), (yaml, calls) => roundTrip(yaml, calls, true)),
      { numRuns: 60 },
    );
  });

  it("[M15.3] [M16.3] calls that may leave fs or net unbound: no_binding exactly where decide failed closed", async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, callsArb(false), (yaml, calls) => roundTrip(yaml, calls, false)),
      { numRuns: 60 },
    );
  });
});
