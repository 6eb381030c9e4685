import { answerVector, type DecisionInput } from "@aegis/vectors/oracle";
import type { Polarity, VectorSet } from "./vector-set.js";
import { STATED } from "./policy-stated.js";

type Case = readonly [name: string, spec: readonly string[], description: string, yaml: readonly string[], decisions: readonly DecisionInput[]];

const BASE = [
  "version: 1",
  "default: deny",
  "rules:",
  "  - id: read-docs",
  "    action: allow",
  "    tool: fs.read",
  "    role: ops",
  "    priority: 5",
  "  - id: no-shell",
  "    action: deny",
  "    tool: shell.exec",
  "    reason: shell is off",
];
const ops = { role: "ops" } as const;

/** SPEC §15: Policy Sets, their hash, and `decide`. One property per file. */
const CASES: readonly Case[] = [
  [
    "hash_example",
    ["15.1", "15.4"],
    "A small version 1 set: its hash and two decisions.",
    BASE,
    [
      { tool_id: "fs.read", axes: ops },
      { tool_id: "shell.exec", axes: ops },
    ],
  ],
  [
    "hash_layout_independent",
    ["15.4"],
    "hash_example's set in flow style, reordered keys and comments: the same hash.",
    [
      "# the same set as hash_example, written differently",
      "rules: [ { action: allow, id: read-docs, role: ops, tool: fs.read, priority: 5 },",
      "         { reason: 'shell is off', tool: shell.exec, action: deny, id: no-shell } ]",
      "default: deny   # refuse what no rule names",
      "version: 1",
    ],
    [],
  ],
  [
    "hash_defaults_written",
    ["15.4"],
    "hash_example's set with defaults written out (priority 0, wildcards): the same hash.",
    [...BASE.slice(0, 8), "    capability: '*'", ...BASE.slice(8), "    priority: 0", "    role: '*'"],
    [],
  ],
  [
    "hash_rule_order",
    ["15.4"],
    "hash_example's rules in the other order: a different hash (rule order is covered).",
    ["version: 1", "default: deny", "rules:", ...BASE.slice(8), ...BASE.slice(3, 8)],
    [],
  ],
  [
    "deny_wins",
    ["15.3"],
    "A deny matches with less specificity and lower priority than an allow: the deny wins.",
    [
      "version: 1",
      "rules:",
      "  - { id: allow-exact, action: allow, tool: t, role: ops, capability: c, priority: 9 }",
      "  - { id: deny-any, action: deny, tool: t }",
    ],
    [{ tool_id: "t", axes: { role: "ops", capability: "c" } }],
  ],
  [
    "specificity",
    ["15.3"],
    "Two non-deny rules: the one with more matchers that matched wins.",
    [
      "version: 1",
      "rules:",
      "  - { id: park-tool, action: pending_approval, tool: t, priority: 9 }",
      "  - { id: allow-tool-role, action: allow, tool: t, role: ops }",
    ],
    [
      { tool_id: "t", axes: ops },
      { tool_id: "t", axes: { role: "dev" } },
    ],
  ],
  [
    "priority",
    ["15.3"],
    "Equal specificity: the higher priority wins.",
    [
      "version: 1",
      "rules:",
      "  - { id: park-low, action: pending_approval, tool: t, priority: 1 }",
      "  - { id: allow-high, action: allow, tool: t, priority: 2 }",
    ],
    [{ tool_id: "t" }],
  ],
  [
    "full_tie_earlier",
    ["15.3"],
    "Equal specificity and priority: the earlier rule wins.",
    ["version: 1", "rules:", "  - { id: first, action: pending_approval, tool: t }", "  - { id: second, action: allow, tool: t }"],
    [{ tool_id: "t" }],
  ],
  [
    "default_deny",
    ["15.3", "15.5"],
    "No rule matches: the default, deny, with no rule named.",
    ["version: 1", "default: deny", "rules:", "  - { id: only-t, action: allow, tool: t }"],
    [{ tool_id: "other" }],
  ],
  ["default_allow_absent", ["15.1", "15.3"], "No default given: allow, as the reference reads it.", ["version: 1", "rules: []"], [{ tool_id: "anything" }]],
  [
    "role_wildcard",
    ["15.1", "15.3"],
    "role '*' matches any role and none.",
    ["version: 1", "default: deny", "rules:", "  - { id: any-role, action: allow, tool: t, role: '*' }"],
    [{ tool_id: "t", axes: ops }, { tool_id: "t" }],
  ],
  [
    "v2_fs_prefix",
    ["15.2", "15.5"],
    "A path prefix on decision_axes.fs.path_canonical.",
    ["version: 2", "default: deny", "rules:", "  - { id: workspace, action: allow, tool: fs.read, fs: { path_prefix: /workspace/ } }"],
    [
      { tool_id: "fs.read", axes: { fs: { path_raw: "notes.md", path_canonical: "/workspace/notes.md" } } },
      { tool_id: "fs.read", axes: { fs: { path_raw: "/etc/shadow", path_canonical: "/etc/shadow" } } },
    ],
  ],
  [
    "v2_fs_glob",
    ["15.2"],
    "A path glob: ** crosses directories, * does not.",
    ["version: 2", "default: deny", "rules:", "  - { id: markdown, action: allow, tool: fs.read, fs: { path_glob: '/w/**/*.md' } }"],
    [
      { tool_id: "fs.read", axes: { fs: { path_raw: "a", path_canonical: "/w/a.md" } } },
      { tool_id: "fs.read", axes: { fs: { path_raw: "b", path_canonical: "/w/x/y/b.md" } } },
      { tool_id: "fs.read", axes: { fs: { path_raw: "c", path_canonical: "/w/x/c.txt" } } },
    ],
  ],
  [
    "v2_net",
    ["15.2"],
    "A host suffix and a port range on decision_axes.net.",
    [
      "version: 2",
      "default: deny",
      "rules:",
      "  - { id: internal-https, action: allow, tool: net.get, net: { host_suffix: .corp.example, port_range: { min: 443, max: 443 } } }",
    ],
    [
      { tool_id: "net.get", axes: { net: { host: "api.corp.example", port: 443 } } },
      { tool_id: "net.get", axes: { net: { host: "corp.example", port: 443 } } },
      { tool_id: "net.get", axes: { net: { host: "api.corp.example", port: 80 } } },
    ],
  ],
  [
    "v2_session",
    ["15.2"],
    "A session matcher.",
    ["version: 2", "default: allow", "rules:", "  - { id: quarantine, action: deny, session: s-9 }"],
    [
      { tool_id: "t", axes: { session: "s-9" } },
      { tool_id: "t", axes: { session: "s-1" } },
    ],
  ],
  [
    "v2_args",
    ["15.2", "9"],
    "Argument matchers over the verbatim request: exact, prefix, exists; the set needs the Envelope.",
    [
      "version: 2",
      "default: allow",
      "rules:",
      "  - id: no-force-main",
      "    action: deny",
      "    tool: git.push",
      "    args: [{ pointer: /force, exact: true }, { pointer: /branch, prefix: main }, { pointer: /dry_run, exists: false }]",
    ],
    [
      { tool_id: "git.push", request: '{"branch":"main","force":true}' },
      { tool_id: "git.push", request: '{"branch":"main","force":true,"dry_run":true}' },
      { tool_id: "git.push", request: '{"branch":"dev","force":true}' },
      { tool_id: "git.push", request: '{"branch":"main","force":"true"}' },
    ],
  ],
  [
    "v2_unbound_fails_closed",
    ["15.3", "15.5"],
    "A rule that would win needs decision_axes.fs, which the call did not bind: denied, naming the rule.",
    ["version: 2", "default: allow", "rules:", "  - { id: tmp-only, action: allow, tool: fs.write, fs: { path_prefix: /tmp/ }, priority: 1 }"],
    [{ tool_id: "fs.write" }],
  ],
  [
    "approval_resumes",
    ["15.5"],
    "A call carrying approval_ref whose rule parks it is allowed; a deny still wins.",
    ["version: 1", "rules:", "  - { id: park-shell, action: pending_approval, tool: shell.exec }", "  - { id: deny-rm, action: deny, tool: fs.rm }"],
    [{ tool_id: "shell.exec" }, { tool_id: "shell.exec", axes: { approval_ref: "apr-1" } }, { tool_id: "fs.rm", axes: { approval_ref: "apr-1" } }],
  ],
  [
    "rate_limit_window",
    ["15.6"],
    "A rate limit of one call per window: the second call in the window is rate_limited.",
    ["version: 1", "rules:", "  - { id: one-search, action: rate_limit, tool: search, rate: { max: 1, per_seconds: 60 } }"],
    [{ tool_id: "search" }, { tool_id: "search" }, { tool_id: "other" }],
  ],
  // Refusals: every bad path at once (SPEC §15.1).
  [
    "refuse_unknown_key",
    ["15.1"],
    "An unknown key at the top and in a rule.",
    ["version: 1", "defaults: deny", "rules:", "  - { id: a, action: allow, tool: t, tools: [x] }"],
    [],
  ],
  [
    "refuse_duplicate_id",
    ["15.1"],
    "Two rules with one id.",
    ["version: 1", "rules:", "  - { id: a, action: allow, tool: t }", "  - { id: a, action: deny, tool: u }"],
    [],
  ],
  [
    "refuse_rate_on_allow",
    ["15.1"],
    "rate on a rule that is not rate_limit.",
    ["version: 1", "rules:", "  - { id: a, action: allow, tool: t, rate: { max: 1, per_seconds: 1 } }"],
    [],
  ],
  ["refuse_rate_missing", ["15.1"], "A rate_limit rule without rate.", ["version: 1", "rules:", "  - { id: a, action: rate_limit, tool: t }"], []],
  [
    "refuse_wrong_types",
    ["15.1"],
    "priority as a string and tool as a list.",
    ["version: 1", "rules:", "  - { id: a, action: allow, tool: [t], priority: high }"],
    [],
  ],
  ["refuse_version_3", ["15.1"], "version 3 is not a version this reader knows.", ["version: 3", "rules: []"], []],
  ["refuse_bad_action", ["15.1"], "An action that is not one of the four.", ["version: 1", "rules:", "  - { id: a, action: block, tool: t }"], []],
  [
    "refuse_limits_on_deny",
    ["15.1"],
    "limits on a deny rule.",
    ["version: 1", "rules:", "  - { id: a, action: deny, tool: t, limits: { max_wall_ms: 5 } }"],
    [],
  ],
  [
    "refuse_v2_key_in_v1",
    ["15.2"],
    "A version 2 matcher in a version 1 set.",
    ["version: 1", "rules:", "  - { id: a, action: allow, tool: t, session: s }"],
    [],
  ],
  [
    "refuse_conflicting_fs",
    ["15.2"],
    "Two fs matchers in one rule.",
    ["version: 2", "rules:", "  - { id: a, action: allow, tool: t, fs: { path: /a, path_prefix: /b } }"],
    [],
  ],
  [
    "refuse_relative_fs",
    ["15.2"],
    "fs matchers that could never match an absolute path: a relative path_prefix and path, a glob beginning with ?.",
    [
      "version: 2",
      "rules:",
      "  - { id: a, action: allow, tool: t, fs: { path_prefix: workspace/ } }",
      "  - { id: b, action: allow, tool: t, fs: { path: notes.md } }",
      '  - { id: c, action: allow, tool: t, fs: { path_glob: "?/a.md" } }',
      '  - { id: d, action: allow, tool: t, fs: { path_glob: "*/etc/passwd" } }',
    ],
    [],
  ],
  [
    "refuse_port_range_inverted",
    ["15.2"],
    "A port range whose min is above its max.",
    ["version: 2", "rules:", "  - { id: a, action: allow, tool: t, net: { port_range: { min: 9, max: 1 } } }"],
    [],
  ],
  [
    "refuse_bad_pointer",
    ["15.2"],
    "An argument matcher whose pointer is not a JSON Pointer.",
    ["version: 2", "rules:", "  - { id: a, action: deny, tool: t, args: [{ pointer: force, exact: true }] }"],
    [],
  ],
  [
    "refuse_yaml_syntax",
    ["15.1"],
    "A quote never closed: not YAML (the reference's malformed.yaml).",
    ["version: 1", "default: allow", "rules:", '  - id: "broken', "    action: deny", "    tool: writer"],
    [],
  ],
  ["refuse_duplicate_yaml_key", ["15.1"], "A key repeated in one mapping.", ["version: 1", "version: 2", "rules: []"], []],
  ["refuse_alias", ["15.1"], "YAML anchors and aliases are refused.", ["version: 1", "rules:", "  - &r { id: a, action: allow, tool: t }", "  - *r"], []],
  [
    "refuse_everything_at_once",
    ["15.1"],
    "Five problems in one file, all listed: unknown key, duplicate id, rate off a rate rule, wrong type, version 3.",
    [
      "version: 3",
      "rules:",
      "  - { id: a, action: allow, tool: t, colour: red }",
      "  - { id: a, action: deny, tool: u, rate: { max: 1, per_seconds: 1 } }",
      "  - { id: b, action: allow, tool: v, priority: high }",
    ],
    [],
  ],
];

/** Reformatting keeps the hash; reordering rules changes it (SPEC §15.4). */
const SAME_HASH_AS_EXAMPLE = ["hash_layout_independent", "hash_defaults_written"];

export async function policyVectors(set: VectorSet): Promise<void> {
  let exampleHash: string | undefined;
  for (const [name, spec, description, yaml, decisions] of CASES) {
    const text = `${yaml.join("\n")}\n`;
    const path = set.file(`policies/${name}.yaml`, text);
    const expected = await answerVector({ kind: "policy", policy: text, decisions });
    const refused = expected.result === "invalid" || expected.decisions.some((d) => d.verdict !== "allowed");
    const polarity: Polarity = refused ? "negative" : "positive";
    if (name.startsWith("refuse_") !== (expected.result === "invalid")) throw new Error(`policies/${name}: answered ${expected.result}`);
    const answered = expected.result === "invalid" ? expected.problems.map((p) => p.code) : expected.decisions.map((d) => [d.verdict, d.rule]);
    if (JSON.stringify(answered) !== JSON.stringify(STATED[name]))
      throw new Error(`policies/${name}: answered ${JSON.stringify(answered)}, stated ${JSON.stringify(STATED[name])}`);
    if (expected.result === "valid") {
      if (name === "hash_example") exampleHash = expected.policy_set_hash;
      const same = expected.policy_set_hash === exampleHash;
      if (SAME_HASH_AS_EXAMPLE.includes(name) !== same && name !== "hash_example")
        throw new Error(`policies/${name}: hash ${same ? "equals" : "differs from"} hash_example's`);
    }
    set.add({ id: `policies/${name}`, kind: "policy", description, spec, flags: [polarity, "policy"], input: { policy: path, decisions }, expected });
  }
}
