import { describe, expect, it } from "vitest";
import { RateWindows, decide, type Decision, type PolicySet } from "../src/index.js";
import { matchedRuleId } from "../src/internal.js";
import { mintApprovalId, type DecisionRequest } from "../src/decide.js";
import { policy } from "./support/policies.js";

const ruleOf = (d: Decision): string => matchedRuleId(d.matched) ?? "(default)";
const json = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("selection (SPEC §15.3)", () => {
  it("[M15.3] any matching deny wins, even over a more specific allow", () => {
    const set = policy("rules:", "  - {id: allow-specific, action: allow, tool: t, role: owner, capability: c}", "  - {id: deny-broad, action: deny}");
    const d = decide(set, { tool_id: "t", axes: { role: "owner", capability: "c" } });
    expect(d.code).toBe("denied");
    expect(ruleOf(d)).toBe("deny-broad");
  });

  it("[M15.3] otherwise the highest specificity, then the highest priority", () => {
    const set = policy(
      "rules:",
      "  - {id: broad, action: pending_approval, priority: 100}",
      "  - {id: tool, action: allow, tool: t}",
      "  - {id: tool-role, action: allow, tool: t, role: r}",
      "  - {id: tool-role-high, action: allow, tool: t, role: r, priority: 5}",
    );
    expect(ruleOf(decide(set, { tool_id: "t", axes: { role: "r" } }))).toBe("tool-role-high");
    expect(ruleOf(decide(set, { tool_id: "t" }))).toBe("tool");
    expect(ruleOf(decide(set, { tool_id: "u" }))).toBe("broad");
  });

  it("[M15.3] a full tie keeps the earlier rule; among denies too", () => {
    const set = policy("rules:", "  - {id: first, action: deny, tool: t}", "  - {id: second, action: deny, tool: t}");
    expect(ruleOf(decide(set, { tool_id: "t" }))).toBe("first");
    const allows = policy("rules:", "  - {id: first, action: allow, role: r}", "  - {id: second, action: pending_approval, tool: t}");
    expect(ruleOf(decide(allows, { tool_id: "t", axes: { role: "r" } }))).toBe("first");
  });

  it("[M15.3] nothing matches: the default, with the reference's reasons", () => {
    const deny = decide(policy("default: deny"), { tool_id: "t" });
    expect(deny).toMatchObject({
      code: "denied",
      cause: { code: "default" },
      matched: { code: "default" },
      policy: { status: "denied", reason: "no matching rule (default deny)" },
    });
    expect(deny.decision_axes).toEqual({});
    expect(decide(policy("default: allow"), { tool_id: "t" })).toMatchObject({ code: "allowed", policy: { status: "allowed" } });
  });

  it("[M15.3] a matcher on an axis the call did not assert does not match; `*` matches anything", () => {
    const set = policy("rules:", "  - {id: ops, action: deny, role: ops}", "  - {id: any, action: pending_approval, role: '*', capability: '*'}");
    expect(ruleOf(decide(set, { tool_id: "t" }))).toBe("any");
    expect(ruleOf(decide(set, { tool_id: "t", axes: { role: "ops" } }))).toBe("ops");
  });

  it("[M15.3] version 2 matchers: session, fs path exact/prefix/glob, net host/suffix/ports/range", () => {
    const set = policy(
      "version: 2",
      "default: deny",
      "rules:",
      "  - {id: session, action: allow, tool: s, session: s1}",
      "  - {id: exact, action: allow, tool: f, fs: {path: /etc/hosts}}",
      "  - {id: prefix, action: allow, tool: f, fs: {path_prefix: /workspace/}}",
      "  - {id: glob, action: allow, tool: g, fs: {path_glob: '/w/**/*.md'}}",
      "  - {id: host, action: allow, tool: n, net: {host: api.example.com, ports: [443, 8443]}}",
      "  - {id: suffix, action: allow, tool: m, net: {host_suffix: .example.org, port_range: {min: 1000, max: 2000}}}",
    );
    const fs = (path: string) => ({ fs: { path_raw: path, path_canonical: path } });
    const net = (host: string, port: number) => ({ net: { host, port } });
    const cases: readonly (readonly [DecisionRequest, string])[] = [
      [{ tool_id: "s", axes: { session: "s1" } }, "session"],
      [{ tool_id: "s", axes: { session: "s2" } }, "(default)"],
      [{ tool_id: "f", axes: fs("/etc/hosts") }, "exact"],
      [{ tool_id: "f", axes: fs("/workspace/a/b") }, "prefix"],
      [{ tool_id: "f", axes: fs("/etc/passwd") }, "(default)"],
      [{ tool_id: "g", axes: fs("/w/a.md") }, "glob"],
      [{ tool_id: "g", axes: fs("/w/x/y/a.md") }, "glob"],
      [{ tool_id: "g", axes: fs("/w/x/a.txt") }, "(default)"],
      [{ tool_id: "g", axes: fs("/wa.md") }, "(default)"],
      [{ tool_id: "n", axes: net("API.Example.COM", 443) }, "host"],
      [{ tool_id: "n", axes: net("api.example.com", 80) }, "(default)"],
      [{ tool_id: "n", axes: net("evil.api.example.com", 443) }, "(default)"],
      [{ tool_id: "m", axes: net("a.example.org", 1500) }, "suffix"],
      [{ tool_id: "m", axes: net("a.example.org", 2001) }, "(default)"],
      [{ tool_id: "m", axes: net("example.org", 1500) }, "(default)"],
    ];
    for (const [request, expected] of cases) expect(ruleOf(decide(set, request)), JSON.stringify(request)).toBe(expected);
  });

  it("[M15.3] argument matchers over the request JSON: exact, prefix, exists", () => {
    const set = policy(
      "version: 2",
      "rules:",
      "  - id: force",
      "    action: deny",
      "    tool: git",
      "    args: [{pointer: /params/arguments/force, exact: true}, {pointer: /params/arguments/branch, prefix: main}]",
      "  - id: count",
      "    action: pending_approval",
      "    tool: pay",
      "    args: [{pointer: /amount, exact: 1000}, {pointer: /memo, exists: false}, {pointer: /to/0, exact: bob}]",
    );
    const git = (body: string) => decide(set, { tool_id: "git", request: json(body) });
    expect(ruleOf(git('{"params":{"arguments":{"force":true,"branch":"main-2"}}}'))).toBe("force");
    expect(ruleOf(git('{"params":{"arguments":{"force":"true","branch":"main"}}}'))).toBe("(default)");
    expect(ruleOf(git('{"params":{"arguments":{"force":true,"branch":"dev"}}}'))).toBe("(default)");
    // Bytes that are not JSON cannot be evaluated: fail closed, never "no match" (SPEC §15.2).
    expect(decide(set, { tool_id: "git", request: json("not json") })).toMatchObject({
      code: "denied",
      cause: { code: "unbound", parameter: "arguments" },
      decision_axes: { matched_rule: "force" },
    });
    const pay = (body: string) => decide(set, { tool_id: "pay", request: json(body) });
    expect(ruleOf(pay('{"amount":1000,"to":["bob"]}'))).toBe("count");
    // 1000.0, 1e3 and -0 are the number a server acts on, written another way: neither a match nor not.
    for (const amount of ["1000.0", "1e3", "1000.000000000000001"]) {
      expect(decide(set, { tool_id: "pay", request: json(`{"amount":${amount},"to":["bob"]}`) })).toMatchObject({
        code: "denied",
        cause: { code: "unbound", parameter: "arguments" },
      });
    }
    expect(ruleOf(pay('{"amount":1000.5,"to":["bob"]}'))).toBe("(default)");
    expect(ruleOf(pay('{"amount":999,"to":["bob"]}'))).toBe("(default)");
    expect(ruleOf(pay('{"amount":1000,"to":["bob"],"memo":""}'))).toBe("(default)");
    expect(ruleOf(pay('{"amount":1000,"to":{"0":"bob"}}'))).toBe("count");
    expect(ruleOf(pay('{"amount":1000,"to":["alice","bob"]}'))).toBe("(default)");
  });

  it("[M15.3] an unbound rule that would win fails the call closed; one that could not win does not", () => {
    const set = policy(
      "version: 2",
      "rules:",
      "  - {id: fs-allow, action: allow, tool: t, fs: {path_prefix: /w/}}",
      "  - {id: broad-deny, action: deny, capability: danger}",
      "  - {id: args-park, action: pending_approval, tool: t, args: [{pointer: /x, exists: true}]}",
    );
    const unbound = decide(set, { tool_id: "t" });
    expect(unbound).toMatchObject({
      code: "denied",
      cause: { code: "unbound", parameter: "fs" },
      policy: { status: "denied", reason: "rule `fs-allow` needs decision_axes.fs, which this call did not bind" },
      decision_axes: { matched_rule: "fs-allow" },
    });
    // A matching deny overrides whatever the unbound allow and park would have said.
    expect(decide(set, { tool_id: "t", axes: { capability: "danger" } })).toMatchObject({ code: "denied", cause: { code: "rule" } });
    // fs bound and not matching: only the park is left, and it needs the request bytes.
    const fs = { path_raw: "/etc/x", path_canonical: "/etc/x" };
    expect(decide(set, { tool_id: "t", axes: { fs } })).toMatchObject({ code: "denied", cause: { code: "unbound", parameter: "request" } });
    expect(decide(set, { tool_id: "t", axes: { fs }, request: json('{"x":1}') })).toMatchObject({ code: "pending_approval" });
    // A bound parameter that fails settles the rule, whatever else is unbound.
    expect(decide(set, { tool_id: "u" }).code).toBe("allowed");
  });
});

describe("decide (SPEC §15.5)", () => {
  const set = policy(
    "version: 2",
    "default: deny",
    "rules:",
    "  - {id: read, action: allow, tool: fs.read, limits: {max_wall_ms: 5000}}",
    "  - {id: post, action: deny, tool: net.post}",
    "  - {id: shell, action: pending_approval, tool: shell.exec}",
  );

  it("[M15.5] gives the outcome members to record: policy, decision_axes with the matched rule, policy_set_hash", () => {
    const d = decide(set, {
      tool_id: "fs.read",
      axes: { capability: "fs.read", role: "agent", session: "demo", fs: { path_raw: "~/a", path_canonical: "/home/u/a" } },
    });
    expect(d).toMatchObject({ code: "allowed", limits: { max_wall_ms: 5000n }, policy: { status: "allowed" }, policy_set_hash: set.hash });
    expect(d.decision_axes).toEqual({
      capability: "fs.read",
      role: "agent",
      session: "demo",
      fs: { path_raw: "~/a", path_canonical: "/home/u/a" },
      matched_rule: "read",
    });
    expect(decide(set, { tool_id: "net.post" }).policy).toEqual({ status: "denied", reason: "denied by rule `post`" });
  });

  it("[M15.5] records only the axes the Chain defines", () => {
    const axes = { role: "r", colour: "blue" } as unknown as DecisionRequest["axes"];
    expect(decide(set, { tool_id: "x", ...(axes === undefined ? {} : { axes }) }).decision_axes).toEqual({ role: "r" });
  });

  it("[M15.5] a call resumed under an approval is let through by the park that asked for it", () => {
    const d = decide(set, { tool_id: "shell.exec", axes: { approval_ref: "apr-1" } });
    expect(d).toMatchObject({ code: "allowed", policy: { status: "allowed" }, decision_axes: { approval_ref: "apr-1", matched_rule: "shell" } });
    const denied = decide(set, { tool_id: "net.post", axes: { approval_ref: "apr-1" } });
    expect(denied.code).toBe("denied");
  });

  it("[M15.7] a park gets an approval id unique across calls and processes, or the caller's", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const d = decide(set, { tool_id: "shell.exec" });
      if (d.code !== "pending_approval") throw new Error(d.code);
      expect(d.policy).toEqual({ status: "pending_approval", approval_id: d.approval_id });
      ids.add(d.approval_id);
    }
    expect(ids.size).toBe(1000);
    expect([...ids].every((id) => /^apr-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/u.test(id))).toBe(true);
    expect(mintApprovalId()).not.toBe(mintApprovalId());
    expect(decide(set, { tool_id: "shell.exec" }, { mintApprovalId: () => "apr-fixed" })).toMatchObject({ approval_id: "apr-fixed" });
  });
});

describe("live rate limits (SPEC §15.6)", () => {
  const set: PolicySet = policy(
    "version: 2",
    "rules:",
    "  - {id: throttle, action: rate_limit, tool: search, rate: {max: 2, per_seconds: 10}}",
    "  - {id: named, action: rate_limit, tool: other, reason: slow down, rate: {max: 1, per_seconds: 1}}",
  );

  it("[M15.6] admits max calls per window, per tool and session, in state the caller owns", () => {
    let now = 0;
    const live = { windows: new RateWindows(), now: () => now };
    const call = (session?: string) => decide(set, { tool_id: "search", ...(session === undefined ? {} : { axes: { session } }) }, live);
    expect(call().code).toBe("allowed");
    expect(call().code).toBe("allowed");
    const third = call();
    expect(third).toMatchObject({ code: "rate_limited", policy: { status: "rate_limited", reason: "rate limit exceeded for `throttle` (2 per 10s)" } });
    expect(third.decision_axes.matched_rule).toBe("throttle");
    expect(call("s1").code).toBe("allowed");
    now = 9_999;
    expect(call().code).toBe("rate_limited");
    now = 10_000;
    expect(call().code).toBe("allowed");
    // Another owner's state is another count.
    expect(decide(set, { tool_id: "search" }, { windows: new RateWindows(), now: () => now }).code).toBe("allowed");
    const named = decide(set, { tool_id: "other" }, live);
    expect(named.code).toBe("allowed");
    expect(decide(set, { tool_id: "other" }, live).policy).toEqual({ status: "rate_limited", reason: "slow down" });
  });

  it("[M15.6] drops closed windows, so many sessions do not hold memory for ever", () => {
    let now = 0;
    const windows = new RateWindows();
    for (let i = 0; i < 20_000; i++) {
      now = i * 100; // each window lasts 10 s: about 100 are open at any time
      expect(decide(set, { tool_id: "search", axes: { session: `s${i}` } }, { windows, now: () => now }).code).toBe("allowed");
    }
    expect(windows.size).toBeLessThan(2_500);
  });

  it("[M15.6] refuses to decide a rate limit without windows to count in", () => {
    expect(() => decide(set, { tool_id: "search" })).toThrow(TypeError);
    expect(decide(set, { tool_id: "elsewhere" }).code).toBe("allowed");
  });
});
