import { describe, expect, it } from "vitest";
import { PolicyParseError, describeRecheckLine, parsePolicySet, recheck, type RecheckVerdict } from "../src/index.js";
import { RecheckTally, type RecheckConclusion } from "../src/internal.js";
import { recheckBytes } from "../src/recheck.js";
import { fixturePath, fixtureText } from "./support/fixtures.js";

/** The reference CLI's exit code for a conclusion (SPEC §16.5): it exits 0 on a file with nothing to recheck. */
const REFERENCE_EXIT: Readonly<Record<RecheckConclusion["code"], number>> = { nothing_rechecked: 0, all_unchanged: 0, changed: 1, indeterminate: 3 };

/**
 * The reference CLI's recheck table (botzrDev/aegis, crates/botzr-aegis-cli/tests/recheck.rs
 * and its fixtures), reproduced at the library level: the same lines, the same exit code.
 */
async function run(policy: string, record: string): Promise<{ stdout: string; exit: number; verdicts: RecheckVerdict[] }> {
  const set = parsePolicySet(fixtureText(policy));
  const tally = new RecheckTally();
  const verdicts: RecheckVerdict[] = [];
  for await (const v of recheck(fixturePath(record), { code: "policy", policy: set })) {
    tally.add(v);
    verdicts.push(v);
  }
  const lines = verdicts.map(describeRecheckLine);
  return { stdout: lines.map((l) => `${l}\n`).join(""), exit: REFERENCE_EXIT[tally.conclusion.code], verdicts };
}

const CLEAN_UNCHANGED =
  "call call-1 session 0 seq 2: unchanged allowed\n" +
  "call call-2 session 0 seq 3: unchanged denied\n" +
  "call call-3 session 0 seq 4: unchanged pending_approval\n";

describe("the reference's recheck table [M16.1] [M16.4] [M16.5]", () => {
  it("unchanged.yaml over session_clean.jsonl: exit 0, every call unchanged", async () => {
    const r = await run("unchanged.yaml", "session_clean.jsonl");
    expect(r.stdout).toBe(CLEAN_UNCHANGED);
    expect(r.exit).toBe(0);
  });

  it("new_deny.yaml over session_clean.jsonl: exit 1, call-1 newly blocked", async () => {
    const r = await run("new_deny.yaml", "session_clean.jsonl");
    expect(r.stdout).toBe(
      "call call-1 session 0 seq 2: newly_blocked was=allowed now=denied\n" +
        "call call-2 session 0 seq 3: unchanged denied\n" +
        "call call-3 session 0 seq 4: unchanged pending_approval\n",
    );
    expect(r.exit).toBe(1);
  });

  it("new_park_same.yaml over session_clean.jsonl: exit 0, a park still parked is unchanged", async () => {
    const r = await run("new_park_same.yaml", "session_clean.jsonl");
    expect(r.stdout).toBe(CLEAN_UNCHANGED);
    expect(r.stdout).not.toContain("apr-");
    expect(r.exit).toBe(0);
  });

  it("new_park.yaml over session_clean.jsonl: exit 1, call-1 newly parked, no now= clause", async () => {
    const r = await run("new_park.yaml", "session_clean.jsonl");
    expect(r.stdout).toBe(
      "call call-1 session 0 seq 2: newly_parked was=allowed\n" +
        "call call-2 session 0 seq 3: unchanged denied\n" +
        "call call-3 session 0 seq 4: unchanged pending_approval\n",
    );
    expect(r.exit).toBe(1);
  });

  it("new_rate.yaml over session_clean.jsonl: exit 3, a rate limit is unevaluable", async () => {
    const r = await run("new_rate.yaml", "session_clean.jsonl");
    expect(r.stdout).toBe(
      "call call-1 session 0 seq 2: indeterminate rate_limit_unevaluable\n" +
        "call call-2 session 0 seq 3: unchanged denied\n" +
        "call call-3 session 0 seq 4: unchanged pending_approval\n",
    );
    expect(r.exit).toBe(3);
  });

  it("unchanged.yaml over session.jsonl: exit 3, the v1 line and the tool-less line are indeterminate", async () => {
    const r = await run("unchanged.yaml", "session.jsonl");
    expect(r.stdout).toBe(
      CLEAN_UNCHANGED + "call call-4 session 0 seq 0: indeterminate unknown_policy_set_hash\n" + "call call-5 session 0 seq 6: indeterminate no_binding\n",
    );
    expect(r.exit).toBe(3);
    const noBinding = r.verdicts.at(-1);
    expect(noBinding).toMatchObject({ code: "indeterminate", reason: { code: "no_binding", detail: { code: "unreadable_outcome" } } });
    expect(JSON.stringify(noBinding)).toContain("tool_id");
  });

  it("new_deny.yaml over session.jsonl: exit 3 outranks 1, and the would-block is still reported", async () => {
    const r = await run("new_deny.yaml", "session.jsonl");
    expect(r.stdout).toContain("call call-1 session 0 seq 2: newly_blocked was=allowed now=denied\n");
    expect(r.exit).toBe(3);
  });

  it("malformed.yaml: the set does not parse, with a message for `error: policy parse error:`", () => {
    let caught: unknown;
    try {
      parsePolicySet(fixtureText("malformed.yaml"));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PolicyParseError);
    expect(`error: ${(caught as Error).message}`).toMatch(/^error: policy parse error: line \d+, column \d+: /);
    expect((caught as PolicyParseError).problems.every((p) => p.code === "yaml_syntax")).toBe(true);
  });

  it("two runs over the same bytes give the same report", async () => {
    const a = await run("new_deny.yaml", "session.jsonl");
    const b = await run("new_deny.yaml", "session.jsonl");
    expect(a.stdout).toBe(b.stdout);
  });

  it("a record of a newer schema is unknown_policy_set_hash, not no_binding", async () => {
    const set = parsePolicySet(fixtureText("unchanged.yaml"));
    const bytes = Buffer.from('{"schema_version":3,"phase":"outcome","call_id":"call-future","tool_id":"reader"}\n');
    const lines: string[] = [];
    for await (const v of recheckBytes(bytes, { code: "policy", policy: set })) lines.push(describeRecheckLine(v));
    expect(lines).toEqual(["call call-future session 0 seq 0: indeterminate unknown_policy_set_hash"]);
  });
});
