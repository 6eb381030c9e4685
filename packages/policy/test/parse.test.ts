import { describe, expect, it } from "vitest";
import { PolicyParseError, parsePolicySet } from "../src/index.js";
import { describePolicyProblem, needsEnvelope, tryParsePolicySet } from "../src/internal.js";
import { needsRateWindows } from "../src/model.js";
import { type PolicyProblem } from "../src/problems.js";
import { fixtureText } from "./support/fixtures.js";
import { SPEC_EXAMPLE, policy } from "./support/policies.js";

function problemsOf(text: string): readonly PolicyProblem[] {
  const result = tryParsePolicySet(text);
  if (result.ok) throw new Error("expected the set to be refused");
  return result.problems;
}

function messagesOf(text: string): string[] {
  return problemsOf(text).map(describePolicyProblem);
}

describe("version 1 Policy Sets (SPEC §15.1)", () => {
  it("[M15.1] reads every fixture of the reference but the malformed one", () => {
    for (const name of ["unchanged.yaml", "new_deny.yaml", "new_park.yaml", "new_park_same.yaml", "new_rate.yaml"]) {
      expect(tryParsePolicySet(fixtureText(name)).ok, name).toBe(true);
    }
    const rate = parsePolicySet(fixtureText("new_rate.yaml")).rules[0];
    expect(rate).toMatchObject({ id: "throttle-reader", action: { code: "rate_limit", rate: { max: 1, per_seconds: 60n } }, match: { tool: "reader" } });
  });

  it("reads every key of the format, with the reference's defaults", () => {
    const set = policy(
      "rules:",
      "  - id: a",
      "    action: allow",
      "    tool: t",
      "    capability: fs.read",
      '    role: "*"',
      "    priority: -2147483648",
      "    reason: because",
      "    limits: { max_memory_bytes: 18446744073709551615, max_wall_ms: 5000 }",
    );
    expect(set.version).toBe(1);
    expect(set.default).toBe("allow");
    const [rule] = set.rules;
    expect(rule).toEqual({
      id: "a",
      action: { code: "allow", limits: { max_memory_bytes: 18446744073709551615n, max_wall_ms: 5000n } },
      match: { tool: "t", capability: "fs.read" },
      priority: -2147483648,
      reason: "because",
      specificity: 2,
    });
  });

  it("[M15.1] refuses every bad path of a file in one error", () => {
    const text = [
      "version: 3",
      "colour: blue",
      "rules:",
      "  - id: same",
      "    action: deny",
      "    rate: { max: 1, per_seconds: 60 }",
      "    when: always",
      "  - id: same",
      "    action: allow",
      "    priority: high",
      "  - id: throttle",
      "    action: rate_limit",
      "  - id: parked",
      "    action: pending_approval",
      "    limits: { max_wall_ms: 10 }",
      "  - id: 7",
      "    action: maybe",
      "",
    ].join("\n");
    let error: unknown;
    try {
      parsePolicySet(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PolicyParseError);
    const message = (error as PolicyParseError).message;
    expect(message.startsWith("policy parse error: ")).toBe(true);
    for (const expected of [
      "version: unsupported policy version 3 (supported: 1, 2)",
      "colour: unknown key",
      "rules[0].when: unknown key",
      "rules[0].rate: only allowed when action is rate_limit",
      "rules[1].id: duplicate rule id `same` (first at rules[0])",
      "rules[1].priority: expected an integer",
      "rules[2].rate: required when action is rate_limit",
      "rules[3].limits: only allowed when action is allow or rate_limit",
      "rules[4].id: expected a string",
      "rules[4].action: expected one of allow, deny, rate_limit, pending_approval",
    ]) {
      expect(message).toContain(expected);
    }
    expect((error as PolicyParseError).problems).toHaveLength(10);
  });

  it("[M15.1] refuses a YAML syntax error, with its line and column", () => {
    const problems = problemsOf(fixtureText("malformed.yaml"));
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatchObject({ code: "yaml_syntax" });
    expect(messagesOf("rules: [\n")[0]).toMatch(/^line \d+, column \d+: /);
  });

  it("[M15.1] refuses duplicate keys, aliases, anchors, tags, several documents and an empty file", () => {
    expect(problemsOf("version: 1\nversion: 1\n")[0]).toMatchObject({ code: "yaml_syntax", line: 2 });
    expect(problemsOf("default: &d allow\nrules: []\nx: *d\n").map((p) => p.code)).toEqual(expect.arrayContaining(["yaml_feature", "unknown_key"]));
    expect(problemsOf("default: !!str allow\n")).toEqual([{ code: "yaml_feature", line: 1, column: 16, feature: "tag" }]);
    expect(problemsOf("version: 1\n---\nversion: 1\n")).toMatchObject([{ code: "yaml_feature", feature: "multiple_documents" }]);
    expect(problemsOf("# nothing\n")).toEqual([{ code: "empty_document" }]);
    expect(problemsOf("- 1\n")).toEqual([{ code: "wrong_type", path: "(root)", expected: "a mapping" }]);
  });

  it("[M15.1] reads YAML 1.2 core: `yes` is a string, `1.0` is not an integer, `0x10` is", () => {
    expect(messagesOf("default: yes\n")).toEqual(["default: expected allow or deny"]);
    expect(messagesOf("version: 1.0\n")).toEqual(["version: expected an integer"]);
    expect(messagesOf('version: "1"\n')).toEqual(["version: expected an integer"]);
    // An integer beyond u64 is still an integer, and a version this build does not read.
    expect(problemsOf("version: 18446744073709551616\n")).toEqual([{ code: "unsupported_version", path: "version", found: "18446744073709551616" }]);
    expect(policy("rules:", "  - id: a", "    action: allow", "    priority: 0x10").rules[0]?.priority).toBe(16);
  });

  it("[M15.1] refuses out-of-range numbers: priority beyond i32, rate.max 0, rate.max beyond u32", () => {
    const base = ["rules:", "  - id: r", "    action: rate_limit"];
    expect(messagesOf([...base, "    rate: { max: 0, per_seconds: 1 }"].join("\n"))).toEqual(["rules[0].rate.max: expected an integer from 1 to 4294967295"]);
    expect(messagesOf([...base, "    rate: { max: 4294967296, per_seconds: 1 }"].join("\n"))).toEqual([
      "rules[0].rate.max: expected an integer from 1 to 4294967295",
    ]);
    expect(messagesOf([...base, "    rate: { max: 1 }"].join("\n"))).toEqual(["rules[0].rate.per_seconds: required"]);
    expect(messagesOf(["rules:", "  - id: a", "    action: allow", "    priority: 2147483648"].join("\n"))).toEqual([
      "rules[0].priority: expected an integer from -2147483648 to 2147483647",
    ]);
    expect(messagesOf(["rules:", "  - action: allow"].join("\n"))).toEqual(["rules[0].id: required"]);
  });

  it("[M15.2] refuses the version 2 keys in a version 1 set", () => {
    const text = ["version: 1", "rules:", "  - id: a", "    action: allow", "    session: s", "    fs: { path: /x }"].join("\n");
    expect(messagesOf(text)).toEqual(["rules[0].session: only allowed in a version 2 Policy Set", "rules[0].fs: only allowed in a version 2 Policy Set"]);
  });
});

describe("version 2 Policy Sets (SPEC §15.2)", () => {
  it("[M15.2] reads session, fs, net and argument matchers", () => {
    const set = policy(
      "version: 2",
      "rules:",
      "  - id: a",
      "    action: allow",
      "    session: s1",
      "    fs: { path_glob: '/w/**/*.md' }",
      "    net: { host_suffix: .example.com, port_range: { min: 1024, max: 65535 } }",
      "    args:",
      "      - { pointer: /params/name, prefix: git. }",
      "      - { pointer: /a~1b/~0c, exact: 5 }",
      "      - { pointer: '', exists: true }",
    );
    const [rule] = set.rules;
    expect(rule?.match).toMatchObject({
      session: "s1",
      fs: { code: "glob", glob: "/w/**/*.md" },
      net: { host: { code: "suffix", suffix: ".example.com" }, port: { code: "range", min: 1024, max: 65535 } },
      args: [
        { pointer: "/params/name", tokens: ["params", "name"], test: { code: "prefix", prefix: "git." } },
        { pointer: "/a~1b/~0c", tokens: ["a/b", "~c"], test: { code: "exact", value: { code: "integer", value: 5n } } },
        { pointer: "", tokens: [], test: { code: "exists", exists: true } },
      ],
    });
    expect(rule?.specificity).toBe(7);
    expect(needsEnvelope(set)).toBe(true);
    expect(needsRateWindows(set)).toBe(false);
  });

  it("[M15.2] needsEnvelope is false for a set without argument matchers", () => {
    const set = parsePolicySet(SPEC_EXAMPLE.replace(/ {4}args:\n.*\n.*\n/u, ""));
    expect(needsEnvelope(set)).toBe(false);
    expect(needsEnvelope(parsePolicySet(SPEC_EXAMPLE))).toBe(true);
    expect(needsRateWindows(parsePolicySet(SPEC_EXAMPLE))).toBe(true);
  });

  it("[M15.2] refuses malformed v2 matchers, each at its path", () => {
    const text = [
      "version: 2",
      "rules:",
      "  - id: a",
      "    action: allow",
      "    fs: {}",
      "    net: { host: a, host_suffix: b, ports: [], extra: 1 }",
      "    args: []",
      "  - id: b",
      "    action: deny",
      "    net: { ports: [70000], port_range: { min: 9 } }",
      "    args:",
      "      - { pointer: 'no-slash', exact: 1.5 }",
      "      - { pointer: /x~2 }",
      "      - { pointer: /x, prefix: a, exists: true }",
    ].join("\n");
    expect(messagesOf(text)).toEqual([
      "rules[0].fs: give one of path, path_prefix, path_glob",
      "rules[0].net.extra: unknown key",
      "rules[0].net: give only one of host, host_suffix",
      "rules[0].net.ports: expected at least one port",
      "rules[0].args: expected at least one argument matcher",
      "rules[1].net: give only one of ports, port_range",
      "rules[1].args[0].pointer: not a JSON Pointer (RFC 6901): empty, or `/` tokens with `~` only as `~0` or `~1`",
      "rules[1].args[0].exact: expected a string, an integer, or true or false",
      "rules[1].args[1].pointer: not a JSON Pointer (RFC 6901): empty, or `/` tokens with `~` only as `~0` or `~1`",
      "rules[1].args[1]: give one of exact, prefix, exists",
      "rules[1].args[2]: give only one of prefix, exists",
    ]);
  });

  it("[M15.8] refuses an fs matcher that could never match an absolute path, naming the rule", () => {
    const rule = (id: string, fs: string) => `  - { id: ${id}, action: allow, tool: fs.read, fs: { ${fs} } }`;
    const text = ["version: 2", "rules:", rule("ws", "path_prefix: workspace/"), rule("n", "path: notes.md"), rule("q", 'path_glob: "?/a.md"')].join("\n");
    expect(messagesOf(text)).toEqual([
      `rules[0].fs.path_prefix: "workspace/" can never match a call's path, which is absolute, so rule "ws" never would; begin it with /`,
      `rules[1].fs.path: "notes.md" can never match a call's path, which is absolute, so rule "n" never would; begin it with /`,
      `rules[2].fs.path_glob: "?/a.md" can never match a call's path, which is absolute, so rule "q" never would; begin it with / or *`,
    ]);
    // What can match an absolute path is read: "/" itself, and globs that begin with * or **.
    const fine = ["version: 2", "rules:", rule("root", "path_prefix: /"), rule("any", 'path_glob: "**/*.md"'), rule("top", 'path_glob: "*/etc/passwd"')];
    expect(tryParsePolicySet(fine.join("\n")).ok).toBe(true);
  });
});
