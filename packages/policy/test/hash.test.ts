import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parsePolicySet, type PolicySet } from "../src/index.js";
import { PROJECTION_TAG, policySetProjection } from "../src/projection.js";
import { fixtureText } from "./support/fixtures.js";
import { SPEC_EXAMPLE } from "./support/policies.js";

/** SPEC §15.4's example, byte for byte. */
const SPEC_PROJECTION =
  '{"default":"deny","projection":"aegis-ts/policy-set/1","rules":[' +
  '{"action":"allow","id":"read-workspace","match":{"fs":{"path_prefix":"/workspace/"},"tool":"fs.read"},"priority":"0"},' +
  '{"action":"deny","id":"no-force-push","match":{"args":[{"exact":{"boolean":true},"pointer":"/params/arguments/force"}],"tool":"git.push"},"priority":"-1","reason":"force pushes need a human"},' +
  '{"action":"rate_limit","id":"throttle-search","match":{"tool":"search"},"priority":"0","rate":{"max":"100","per_seconds":"60"}}' +
  '],"version":"2"}';
const SPEC_HASH = "9e31c115cb60432779aad1896f5f17bc8eb2fc9979a5c90932f830748f92a5f8";

const hashOf = (text: string): string => parsePolicySet(text).hash;

describe("policy_set_hash (SPEC §15.4)", () => {
  it("[M15.4] is SHA-256 of the canonical projection; the SPEC example, byte for byte", () => {
    const set = parsePolicySet(SPEC_EXAMPLE);
    expect(policySetProjection(set)).toBe(SPEC_PROJECTION);
    expect(createHash("sha256").update(SPEC_PROJECTION).digest("hex")).toBe(SPEC_HASH);
    expect(set.hash).toBe(SPEC_HASH);
    expect(PROJECTION_TAG).toBe("aegis-ts/policy-set/1");
  });

  it("[M15.4] pins the hash of the reference's unchanged.yaml under our projection", () => {
    expect(parsePolicySet(fixtureText("unchanged.yaml")).hash).toBe("a6228758cd4b25eda3312ccf7a147e251191a295ba8e264bebfccd3410fc4d61");
  });

  it("[M15.4] does not cover comments, layout, quoting, key order, or defaults written out", () => {
    const base = hashOf(SPEC_EXAMPLE);
    const rewritten = [
      "# the same set, written another way",
      "rules:",
      "- rate: {per_seconds: 60, max: 100}",
      "  tool: 'search'",
      "  action: rate_limit",
      "  id: throttle-search",
      "  capability: '*'",
      "  priority: 0",
      'default: "deny"',
      "version: 2",
    ].join("\n");
    const keysMoved = SPEC_EXAMPLE.replace("version: 2\ndefault: deny\n", "default: deny   # comments do not count\nversion: 2\n");
    expect(keysMoved).not.toBe(SPEC_EXAMPLE);
    expect(hashOf(keysMoved)).toBe(base);
    const minimal =
      "version: 2\ndefault: deny\nrules:\n  - id: throttle-search\n    action: rate_limit\n    tool: search\n    rate: { max: 100, per_seconds: 60 }\n";
    expect(hashOf(rewritten)).toBe(hashOf(minimal));
    expect(hashOf("rules: []\n")).toBe(hashOf("version: 1\ndefault: allow\n"));
    expect(hashOf("version: 1\nrules:\n  - {id: a, action: deny, tool: t, limits: {}}\n")).toBe(
      hashOf("version: 1\nrules:\n  - {id: a, action: deny, tool: t}\n"),
    );
    expect(base).toBe(SPEC_HASH);
  });

  it("[M15.4] covers rule order", () => {
    const a = "rules:\n  - {id: a, action: deny, tool: x}\n  - {id: b, action: allow, tool: y}\n";
    const b = "rules:\n  - {id: b, action: allow, tool: y}\n  - {id: a, action: deny, tool: x}\n";
    expect(hashOf(a)).not.toBe(hashOf(b));
  });

  it("[M15.4] changes with every value", () => {
    const variants = [SPEC_EXAMPLE, SPEC_EXAMPLE.replace("version: 2", "version: 2\n# a comment only")];
    expect(new Set(variants.map(hashOf)).size).toBe(1);
    const edits: readonly (readonly [string, string])[] = [
      ["default: deny", "default: allow"],
      ["id: read-workspace", "id: read-workspace-2"],
      ["action: allow", "action: pending_approval"],
      ["tool: fs.read", "tool: fs.write"],
      ["path_prefix: /workspace/", "path_prefix: /workspace"],
      ["path_prefix: /workspace/", "path: /workspace/"],
      ["priority: -1", "priority: 1"],
      ["reason: force pushes need a human", "reason: force pushes need two humans"],
      ["exact: true", "exact: false"],
      ["exact: true", "exact: 'true'"],
      ["exact: true", "exists: true"],
      ["pointer: /params/arguments/force", "pointer: /params/arguments/f"],
      ["max: 100", "max: 101"],
      ["per_seconds: 60", "per_seconds: 61"],
      ["    tool: search\n", "    tool: search\n    role: ops\n"],
      ["    tool: search\n", "    tool: search\n    session: s\n"],
      ["    tool: search\n", "    tool: search\n    capability: c\n"],
      ["    tool: search\n", "    tool: search\n    limits: { max_wall_ms: 1 }\n"],
      ["    tool: search\n", "    tool: search\n    net: { ports: [443] }\n"],
    ];
    const seen = new Set([hashOf(SPEC_EXAMPLE)]);
    for (const [from, to] of edits) {
      expect(SPEC_EXAMPLE.includes(from), from).toBe(true);
      const h = hashOf(SPEC_EXAMPLE.replace(from, to));
      expect(seen.has(h), `${from} -> ${to}`).toBe(false);
      seen.add(h);
    }
    // The integer 5 and the string "5" are different matchers.
    const arg = (v: string): PolicySet => parsePolicySet(`version: 2\nrules:\n  - id: a\n    action: deny\n    args: [{ pointer: /n, exact: ${v} }]\n`);
    expect(arg("5").hash).not.toBe(arg("'5'").hash);
    // Ports keep the order written, as every list does.
    const ports = (v: string): PolicySet => parsePolicySet(`version: 2\nrules:\n  - id: a\n    action: deny\n    net: { ports: ${v} }\n`);
    expect(ports("[80, 443]").hash).not.toBe(ports("[443, 80]").hash);
  });

  it("[M15.4] numbers that do not fit the value space still project: limits above 2^53", () => {
    const set = parsePolicySet("rules:\n  - {id: a, action: allow, limits: {max_output_bytes: 18446744073709551615}}\n");
    expect(policySetProjection(set)).toContain('"limits":{"max_output_bytes":"18446744073709551615"}');
  });
});
