import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, RequestDigest } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { decide, parsePolicySet } from "@aegis/policy";
import { BIN, GOLDEN, STACK_TRACE, aegis, largeRecord, tempDir, vector } from "./support.js";

const fixture = (name: string): string => vector(`external/rust-aegis/recheck/${name}`);
const recheck = (policy: string, record: string, ...flags: string[]) => aegis(["recheck", ...flags, "--policy", fixture(policy), fixture(record)]);

const UNCHANGED = [
  "call call-1 session 0 seq 2: unchanged allowed",
  "call call-2 session 0 seq 3: unchanged denied",
  "call call-3 session 0 seq 4: unchanged pending_approval",
];
const LEGACY = ["call call-4 session 0 seq 0: indeterminate unknown_policy_set_hash", "call call-5 session 0 seq 6: indeterminate no_binding"];

/** The table of ../shared/interop/README.md: the reference CLI's stdout and exit code on its fixtures. */
const TABLE: readonly (readonly [string, string, number, readonly string[]])[] = [
  ["unchanged.yaml", "session_clean.jsonl", 0, UNCHANGED],
  ["new_deny.yaml", "session_clean.jsonl", 1, ["call call-1 session 0 seq 2: newly_blocked was=allowed now=denied", ...UNCHANGED.slice(1)]],
  ["new_park_same.yaml", "session_clean.jsonl", 0, UNCHANGED],
  ["new_park.yaml", "session_clean.jsonl", 1, ["call call-1 session 0 seq 2: newly_parked was=allowed", ...UNCHANGED.slice(1)]],
  ["new_rate.yaml", "session_clean.jsonl", 3, ["call call-1 session 0 seq 2: indeterminate rate_limit_unevaluable", ...UNCHANGED.slice(1)]],
  ["unchanged.yaml", "session.jsonl", 3, [...UNCHANGED, ...LEGACY]],
  ["new_deny.yaml", "session.jsonl", 3, ["call call-1 session 0 seq 2: newly_blocked was=allowed now=denied", ...UNCHANGED.slice(1), ...LEGACY]],
];

describe("aegis recheck: the reference's fixtures, as a child process", () => {
  // The fixtures are unsigned, so only the reference's own behaviour, asked for by name, passes them.
  it.each(TABLE)("%s on %s exits %i with the reference's lines under --unverified-ok", (policy, record, exit, lines) => {
    const run = recheck(policy, record, "--unverified-ok");
    expect(run.stdout).toBe(`${lines.join("\n")}\n`);
    expect(run.status).toBe(exit);
    // Beyond the reference: the record's own verdict, on stderr (these fixtures are unsigned).
    expect(run.stderr).toMatch(/^record: Tampered: line at session 0 seq 0: line carries no signature\n/);
  });

  it.each(TABLE)("%s on %s without --unverified-ok: no verdict line for a record that is not Verified, exit 1 [M16.6]", (policy, record) => {
    const run = recheck(policy, record);
    expect(run.stdout).toBe("");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      "error: the record is not Verified (Tampered: line at session 0 seq 0: line carries no signature), so its calls' verdicts cannot pass\n",
    );
    expect(run.stderr).toContain("help: run `aegis verify` on the record to see where it breaks; pass --unverified-ok");
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });

  it("malformed.yaml: exit 2, empty stdout, stderr starts `error: policy parse error:`", () => {
    const run = recheck("malformed.yaml", "session_clean.jsonl");
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: policy parse error: /);
    expect(run.stderr).toMatch(/\nhelp: /);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("aegis recheck: beyond the reference", () => {
  it("a record given as --policy: the first five of its problems, each short, and how many there are in all", () => {
    const run = aegis(["recheck", "--policy", GOLDEN, GOLDEN]);
    expect(run.status).toBe(2);
    const [error, help] = run.stderr.split("\n");
    expect(error).toMatch(/^error: policy parse error: line \d+, column \d+: [^;]+(?:; [^;]+){4}; and \d+ more \(\d+ problems in all\)$/);
    const [, more, all] = /and (\d+) more \((\d+) problems in all\)$/.exec(error ?? "") ?? [];
    expect(Number(all) - Number(more)).toBe(5);
    expect(Number(all)).toBeGreaterThan(100);
    expect(error?.length).toBeLessThan(1200);
    expect(help).toMatch(/^help: fix .*golden-session\.aarl: a Policy Set is YAML/);
  });

  it("--require-verified refuses an unverified record: exit 1, nothing on stdout", () => {
    const run = recheck("unchanged.yaml", "session_clean.jsonl", "--require-verified");
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(
      "error: the record is not Verified (Tampered: line at session 0 seq 0: line carries no signature), and --require-verified was given\n",
    );
  });

  it("--require-verified --json still prints its document, saying why it stopped", () => {
    const run = recheck("unchanged.yaml", "session_clean.jsonl", "--require-verified", "--json");
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as {
      schema: string;
      record: { verdict: string };
      verdicts: unknown[];
      conclusion: string;
      error: string;
      exit_code: number;
    };
    expect(doc).toMatchObject({ schema: "aegis.recheck/1", record: { verdict: "tampered" }, verdicts: [], conclusion: "record_not_verified", exit_code: 1 });
    expect(doc.error).toContain("--require-verified was given");
  });

  it("--json on a record that is not Verified: no verdicts, conclusion record_not_verified, exit 1", () => {
    const run = recheck("unchanged.yaml", "session_clean.jsonl", "--json");
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as { verdicts: { code: string }[]; summary?: unknown; conclusion: string; error: string; exit_code: number };
    expect(doc.verdicts).toEqual([]);
    expect(doc.summary).toBeUndefined();
    expect(doc).toMatchObject({ conclusion: "record_not_verified", exit_code: 1 });
    expect(doc.error).toContain("so its calls' verdicts cannot pass");
    const reference = JSON.parse(recheck("unchanged.yaml", "session_clean.jsonl", "--json", "--unverified-ok").stdout) as {
      conclusion: string;
      exit_code: number;
    };
    expect(reference).toMatchObject({ conclusion: "all_unchanged", exit_code: 0 });
  });

  it("--json gives every verdict with both matched rules, the counts, the record's verdict and the exit code", () => {
    const run = recheck("new_deny.yaml", "session_clean.jsonl", "--json", "--unverified-ok");
    expect(run.status).toBe(1);
    const doc = JSON.parse(run.stdout) as {
      schema: string;
      record: { verdict: string };
      verdicts: { call_id: string; code: string; recorded: { status: string; matched_rule?: string }; now: { kind: string; id?: string } }[];
      summary: { outcomes: number; unchanged: number; newly_blocked: number };
      exit_code: number;
    };
    expect(doc.schema).toBe("aegis.recheck/1");
    expect(doc.record.verdict).toBe("tampered");
    expect(doc.verdicts[0]).toMatchObject({
      call_id: "call-1",
      code: "newly_blocked",
      recorded: { status: "allowed", matched_rule: "allow-reader" },
      now: { kind: "rule", id: "block-reader" },
    });
    expect(doc.summary).toMatchObject({ outcomes: 3, unchanged: 2, newly_blocked: 1 });
    expect(doc.exit_code).toBe(1);
  });

  it("a record with no outcome is a failure that says nothing was rechecked", async () => {
    const path = join(tempDir(), "empty.aarl");
    const writer = await RecordWriter.open(path, { key: insecureDevKey(), allowInsecureDevKey: true });
    await writer.close();
    const run = aegis(["recheck", "--policy", fixture("unchanged.yaml"), path]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`error: nothing was rechecked: ${path} holds no recorded outcome\n`);
  });

  it("--as-recorded finds each call's set by its policy_set_hash, and says when none is given", async () => {
    const dir = tempDir();
    const strict = "version: 1\ndefault: deny\nrules:\n  - id: read\n    action: allow\n    tool: fs.read\n";
    const loose = "version: 1\ndefault: allow\nrules: []\n";
    const set = parsePolicySet(strict);
    const path = join(dir, "r.aarl");
    const writer = await RecordWriter.open(path, { key: insecureDevKey(), allowInsecureDevKey: true });
    for (const [id, tool] of [
      ["c1", "fs.read"],
      ["c2", "fs.write"],
    ] as const) {
      const d = decide(set, { tool_id: tool, axes: { role: "ops" } });
      await writer.beginCall({ call_id: id, tool_id: tool, policy_set_hash: d.policy_set_hash, request_digest: RequestDigest.of(Buffer.from(id)) });
      await writer.endCall(id, {
        policy: d.policy,
        capability: { status: "denied", reason: "n/a" },
        execution: { status: "success" },
        decision_axes: d.decision_axes,
      });
    }
    await writer.close();
    const policies = join(dir, "policies");
    mkdirSync(policies);
    writeFileSync(join(policies, "loose.yaml"), loose);
    const onlyLoose = aegis(["recheck", "--as-recorded", "--policies", policies, path]);
    expect(onlyLoose.stdout).toBe(
      "call c1 session 0 seq 2: indeterminate unknown_policy_set_hash\ncall c2 session 0 seq 4: indeterminate unknown_policy_set_hash\n",
    );
    expect(onlyLoose.status).toBe(3);
    writeFileSync(join(policies, "strict.yml"), strict);
    const both = aegis(["recheck", "--as-recorded", "--policies", policies, "--require-verified", path]);
    expect(both.stdout).toBe("call c1 session 0 seq 2: unchanged allowed\ncall c2 session 0 seq 4: unchanged denied\n");
    expect(both.status).toBe(0);
    expect(both.stderr).toMatch(/^record: Verified \(unpinned\)\n/);
    // The same record under the loose set alone: the denied call would now be allowed.
    const loosePath = join(policies, "loose.yaml");
    const changed = aegis(["recheck", "--policy", loosePath, path]);
    expect(changed.stdout).toBe("call c1 session 0 seq 2: unchanged allowed\ncall c2 session 0 seq 4: newly_allowed was=denied now=allowed\n");
    expect(changed.status).toBe(1);
  });

  it.each([
    [["recheck", "x.aarl"], "error: recheck needs --policy <YAML> (or --as-recorded --policies <DIR>)"],
    [["recheck", "--as-recorded", "x.aarl"], "error: --as-recorded needs --policies <DIR>"],
    [["recheck", "--policies", ".", "--policy", "p.yaml", "x.aarl"], "error: --policies is only read with --as-recorded"],
    [["recheck", "--policy", "p.yaml", "--key", "abc", "x.aarl"], "error: --key needs a 64-hex public key"],
  ])("usage error %j: exit 1, error and help, no stack trace", (args, error) => {
    const run = aegis(args);
    expect(run.status).toBe(1);
    expect(run.stderr.startsWith(error)).toBe(true);
    expect(run.stderr).toMatch(/\nhelp: /);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });

  it("a version 2 set whose path_prefix is not absolute is refused when read, naming the rule: exit 2", () => {
    const policy = join(tempDir(), "relative.yaml");
    writeFileSync(policy, "version: 2\ndefault: deny\nrules:\n  - { id: read-workspace, action: allow, tool: fs.read, fs: { path_prefix: workspace/ } }\n");
    const run = aegis(["recheck", "--policy", policy, GOLDEN]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(
      `error: policy parse error: rules[0].fs.path_prefix: "workspace/" can never match a call's path, which is absolute, so rule "read-workspace" never would; begin it with /\n`,
    );
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });

  it("an unreadable record or policy is exit 2", () => {
    expect(aegis(["recheck", "--policy", fixture("unchanged.yaml"), "/nonexistent/r.aarl"]).status).toBe(2);
    expect(aegis(["recheck", "--policy", "/nonexistent/p.yaml", fixture("session_clean.jsonl")]).status).toBe(2);
  });
});

describe("aegis recheck: found in review", () => {
  it("a named pipe is read once, verified and rechecked: the same output as from the file", () => {
    for (const flags of [["--unverified-ok"], ["--json"]]) {
      const fromFile = recheck("new_deny.yaml", "session_clean.jsonl", ...flags);
      const run = spawnSync(
        "/bin/sh",
        ["-c", `cat '${fixture("session_clean.jsonl")}' | node '${BIN}' recheck ${flags.join(" ")} --policy '${fixture("new_deny.yaml")}' /dev/stdin`],
        { encoding: "utf8" },
      );
      expect(run.stdout, flags.join(" ")).toBe(fromFile.stdout);
      expect(run.stderr).toBe(fromFile.stderr);
      expect(run.status).toBe(fromFile.status);
    }
  });

  it("- reads the record from standard input: the same lines as from the file", () => {
    const fromFile = recheck("new_deny.yaml", "session_clean.jsonl", "--unverified-ok");
    const run = spawnSync(
      "/bin/sh",
      ["-c", `cat '${fixture("session_clean.jsonl")}' | node '${BIN}' recheck --unverified-ok --policy '${fixture("new_deny.yaml")}' -`],
      { encoding: "utf8" },
    );
    expect(run.stdout).toBe(fromFile.stdout);
    expect(run.status).toBe(1);
  });

  it("cat record | aegis recheck - matches the file form on a signed record of thousands of calls, whole and with a forged signature", async () => {
    // Thousands of signatures: enough that the verifier hands them to its threads.
    const dir = tempDir();
    const whole = join(dir, "whole.aarl");
    await largeRecord(whole, 6000);
    const rows = readFileSync(whole, "utf8").split("\n");
    const forgedRow = rows.findIndex((r, i) => i > 4000 && r.includes('"signature":"'));
    rows[forgedRow] = (rows[forgedRow] ?? "").replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === "0" ? "1" : "0"}`);
    const forged = join(dir, "forged.aarl");
    writeFileSync(forged, rows.join("\n"));
    const policy = fixture("unchanged.yaml");
    for (const record of [whole, forged]) {
      for (const flags of [[], ["--json"]]) {
        const fromFile = aegis(["recheck", ...flags, "--policy", policy, record]);
        const piped = spawnSync("/bin/sh", ["-c", `cat '${record}' | node '${BIN}' recheck ${flags.join(" ")} --policy '${policy}' -`], {
          encoding: "utf8",
          maxBuffer: 1 << 28,
        });
        expect(piped.stdout, `${record} ${flags.join(" ")}`).toBe(fromFile.stdout);
        expect(piped.stderr).toBe(fromFile.stderr);
        expect(piped.status).toBe(fromFile.status);
      }
    }
    const whole0 = aegis(["recheck", "--policy", policy, whole]);
    expect(whole0.stderr).toMatch(/^record: Verified \(unpinned\)\n/);
    expect(whole0.stdout.split("\n").filter((l) => l.length > 0)).toHaveLength(2999);
    expect(aegis(["recheck", "--policy", policy, forged]).stderr).toMatch(
      new RegExp(`^record: Tampered: line at session 0 seq ${forgedRow}: signature does not match this line\n`),
    );
    // Ten runs of the CLI on a record of thousands of calls: minutes on a busy machine.
  }, 300_000);
});
