import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RequestDigest, verifyRecord, type EnvelopeRead } from "@aegis/format";
import { describe, expect, it } from "vitest";
import { RateWindows, describeRecheckLine, recheck, type PolicySet, type RecheckTarget, type RecheckVerdict, type SkippedRow } from "../src/index.js";
import { compareRecorded, explainIndeterminate, type NowClass } from "../src/internal.js";
import { recheckBytes } from "../src/recheck.js";
import { describeRecheck, type PolicyStatus } from "../src/recheck-verdict.js";
import { nothingRechecked, recheckConclusion, summarizeRecheck } from "../src/summary.js";
import { policy } from "./support/policies.js";
import { fakeEnvelope, requestOf, tempDir, writeSession, type TestCall } from "./support/records.js";

async function collect(path: string, target: RecheckTarget, options: Parameters<typeof recheck>[2] = {}): Promise<RecheckVerdict[]> {
  const out: RecheckVerdict[] = [];
  for await (const v of recheck(path, target, options)) out.push(v);
  return out;
}

const byCall = (verdicts: readonly RecheckVerdict[]): Record<string, string> => Object.fromEntries(verdicts.map((v) => [v.call_id ?? "-", describeRecheck(v)]));

/** The set the records below were written under. */
const RECORDED = policy(
  "version: 2",
  "default: allow",
  "rules:",
  "  - {id: deny-post, action: deny, tool: net.post, reason: no posting}",
  "  - {id: park-shell, action: pending_approval, tool: shell.exec}",
);

const CALLS: readonly TestCall[] = [
  { call_id: "read", tool_id: "fs.read", axes: { capability: "fs.read", fs: { path_raw: "a", path_canonical: "/w/a" } } },
  { call_id: "post", tool_id: "net.post", axes: { net: { host: "example.com", port: 443 } } },
  { call_id: "shell", tool_id: "shell.exec" },
  { call_id: "list", tool_id: "fs.list" },
];

async function recorded(): Promise<string> {
  const path = join(tempDir(), "run.aarl");
  await writeSession(path, RECORDED, CALLS);
  return path;
}

describe("recheck verdicts on records the writer wrote (SPEC §16.2)", () => {
  it("[M16.2] under the recording set, every call is unchanged, and the record verifies", async () => {
    const path = await recorded();
    expect((await verifyRecord({ path })).verdict.status).toBe("verified");
    const verdicts = await collect(path, { code: "policy", policy: RECORDED });
    expect(verdicts.map(describeRecheckLine)).toEqual([
      "call read session 0 seq 2: unchanged allowed",
      "call post session 0 seq 4: unchanged denied",
      "call shell session 0 seq 6: unchanged pending_approval",
      "call list session 0 seq 8: unchanged allowed",
    ]);
    expect(verdicts[1]).toMatchObject({ recorded: { status: "denied", matched_rule: "deny-post" }, now: { kind: "rule", id: "deny-post" } });
    expect(verdicts[0]).toMatchObject({ recorded: { status: "allowed" }, now: { kind: "default" } });
    expect(verdicts[0]?.recorded).not.toHaveProperty("matched_rule");
  });

  it("[M16.2] newly_blocked, newly_allowed and newly_parked, with the new matched rule", async () => {
    const path = await recorded();
    const stricter = policy(
      "version: 2",
      "rules:",
      "  - {id: no-read, action: deny, tool: fs.read}",
      "  - {id: park-list, action: pending_approval, tool: fs.list}",
      "  - {id: park-shell, action: pending_approval, tool: shell.exec}",
    );
    const verdicts = await collect(path, { code: "policy", policy: stricter });
    expect(byCall(verdicts)).toEqual({
      read: "newly_blocked was=allowed now=denied",
      post: "newly_allowed was=denied now=allowed",
      shell: "unchanged pending_approval",
      list: "newly_parked was=allowed",
    });
    expect(verdicts[0]).toMatchObject({ code: "newly_blocked", now: { kind: "rule", id: "no-read" } });
    expect(verdicts[1]).toMatchObject({ code: "newly_allowed", recorded: { matched_rule: "deny-post" }, now: { kind: "default" } });
    const denyAll = await collect(path, { code: "policy", policy: policy("default: deny") });
    expect(byCall(denyAll)["shell"]).toBe("newly_blocked was=pending_approval now=denied");
    const allowAll = await collect(path, { code: "policy", policy: policy("default: allow") });
    expect(byCall(allowAll)["shell"]).toBe("newly_allowed was=pending_approval now=allowed");
  });

  it("[M16.2] a recorded rate_limited: denied now is unchanged; allowed or parked now is a change", async () => {
    const path = join(tempDir(), "rate.aarl");
    const throttled = policy("rules:", "  - {id: t, action: rate_limit, tool: search, rate: {max: 1, per_seconds: 3600}}");
    const decisions = await writeSession(
      path,
      throttled,
      [
        { call_id: "s1", tool_id: "search" },
        { call_id: "s2", tool_id: "search" },
      ],
      { windows: new RateWindows() },
    );
    expect(decisions.map((d) => d.code)).toEqual(["allowed", "rate_limited"]);
    expect(byCall(await collect(path, { code: "policy", policy: policy("default: deny") }))["s2"]).toBe("unchanged rate_limited");
    expect(byCall(await collect(path, { code: "policy", policy: policy("default: allow") }))["s2"]).toBe("newly_allowed was=rate_limited now=allowed");
    expect(byCall(await collect(path, { code: "policy", policy: policy("rules: [{id: p, action: pending_approval}]") }))["s2"]).toBe(
      "newly_parked was=rate_limited",
    );
  });

  it("[M16.2] compares every recorded status with every class", () => {
    const statuses: readonly PolicyStatus[] = ["allowed", "denied", "rate_limited", "pending_approval"];
    const table: Record<NowClass, readonly string[]> = {
      allowed: ["unchanged", "newly_allowed", "newly_allowed", "newly_allowed"],
      denied: ["newly_blocked", "unchanged", "unchanged", "newly_blocked"],
      pending_approval: ["newly_parked", "newly_parked", "newly_parked", "unchanged"],
    };
    for (const [now, row] of Object.entries(table) as [NowClass, readonly string[]][]) {
      expect(
        statuses.map((s) => compareRecorded(s, now)),
        now,
      ).toEqual(row);
    }
  });

  it("[M16.2] a call resumed under an approval is unchanged under the park that asked for it", async () => {
    const path = join(tempDir(), "resumed.aarl");
    await writeSession(path, RECORDED, [{ call_id: "again", tool_id: "shell.exec", axes: { approval_ref: "apr-1" } }]);
    expect(byCall(await collect(path, { code: "policy", policy: RECORDED }))).toEqual({ again: "unchanged allowed" });
    expect(byCall(await collect(path, { code: "policy", policy: policy("default: deny") }))).toEqual({ again: "newly_blocked was=allowed now=denied" });
  });
});

describe("indeterminate reasons (SPEC §16.3)", () => {
  it("[M16.3] rate_limit_unevaluable: the new decision is a rate_limit rule", async () => {
    const path = await recorded();
    const verdicts = await collect(path, {
      code: "policy",
      policy: policy("rules: [{id: slow, action: rate_limit, tool: fs.read, rate: {max: 9, per_seconds: 1}}]"),
    });
    expect(verdicts[0]).toMatchObject({ code: "indeterminate", reason: { code: "rate_limit_unevaluable", rule: "slow" }, now: { kind: "rule", id: "slow" } });
    expect(describeRecheck(verdicts[0] as RecheckVerdict)).toBe("indeterminate rate_limit_unevaluable");
  });

  it("[M16.3] no_binding: a rule that would win needs decision_axes.fs or .net the record does not bind", async () => {
    const path = await recorded();
    const set = policy(
      "version: 2",
      "rules:",
      "  - {id: fs-only, action: deny, fs: {path_prefix: /etc/}}",
      "  - {id: net-only, action: allow, tool: shell.exec, net: {ports: [22]}}",
    );
    const verdicts = await collect(path, { code: "policy", policy: set });
    expect(byCall(verdicts)).toEqual({
      read: "unchanged allowed",
      post: "indeterminate no_binding",
      shell: "indeterminate no_binding",
      list: "indeterminate no_binding",
    });
    expect(verdicts[1]).toMatchObject({ reason: { code: "no_binding", detail: { code: "unbound", rule: "fs-only", parameter: "fs" } } });
    const shell = verdicts[2];
    expect(shell).toMatchObject({ reason: { detail: { rule: "fs-only" } } });
    expect(explainIndeterminate((verdicts[1] as Extract<RecheckVerdict, { code: "indeterminate" }>).reason)).toBe(
      "rule `fs-only` needs decision_axes.fs, which the outcome does not record",
    );
  });

  it("[M16.3] no_binding: an outcome that cannot be read; a row that is not JSON is skipped and told", async () => {
    const path = await recorded();
    const rows = readFileSync(path, "utf8").split("\n");
    const outcome = JSON.parse(rows[2] ?? "") as Record<string, unknown>;
    delete outcome["tool_id"];
    rows[2] = JSON.stringify(outcome);
    rows.splice(3, 0, "{ not json");
    writeFileSync(path, rows.join("\n"));
    const skipped: SkippedRow[] = [];
    const verdicts = await collect(path, { code: "policy", policy: RECORDED }, { onSkippedRow: (row) => skipped.push(row) });
    expect(verdicts[0]).toMatchObject({
      code: "indeterminate",
      call_id: "read",
      seq: 2,
      reason: { code: "no_binding", detail: { code: "unreadable_outcome", problems: ["$.tool_id: expected a string (missing)"] } },
    });
    expect(verdicts).toHaveLength(4);
    expect(skipped).toEqual([{ code: "does_not_parse", line: 4, detail: "not JSON: key must be a string at line 1 column 3" }]);
  });

  it("[M16.3] unknown_policy_set_hash: as recorded, a call whose set was not given", async () => {
    const dir = tempDir();
    const path = join(dir, "two.aarl");
    const other = policy("default: deny");
    await writeSession(path, RECORDED, CALLS.slice(0, 2));
    await writeSession(path, other, CALLS.slice(2));
    const both = await collect(path, { code: "as_recorded", sets: [other, RECORDED] });
    expect(both.map(describeRecheckLine)).toEqual([
      "call read session 0 seq 2: unchanged allowed",
      "call post session 0 seq 4: unchanged denied",
      "call shell session 1 seq 2: unchanged denied",
      "call list session 1 seq 4: unchanged denied",
    ]);
    const one = await collect(path, { code: "as_recorded", sets: [RECORDED] });
    expect(one.map(describeRecheck)).toEqual([
      "unchanged allowed",
      "unchanged denied",
      "indeterminate unknown_policy_set_hash",
      "indeterminate unknown_policy_set_hash",
    ]);
    expect(one[2]).toMatchObject({ reason: { detail: { code: "not_given", policy_set_hash: other.hash } }, recorded: { status: "denied" } });
    const none = await collect(path, { code: "as_recorded", sets: [] });
    expect(none.every((v) => v.code === "indeterminate" && v.reason.code === "unknown_policy_set_hash")).toBe(true);
  });

  describe("the Envelope (argument matchers)", () => {
    const ARGS = policy("version: 2", "default: allow", "rules:", "  - {id: no-force, action: deny, tool: git.push, args: [{pointer: /force, exact: true}]}");
    const push = (id: string, force: boolean): TestCall => ({
      call_id: id,
      tool_id: "git.push",
      request: new TextEncoder().encode(`{"force":${force},"id":"${id}"}`),
    });
    const calls = [
      push("present", true),
      push("missing", true),
      push("altered", false),
      push("redacted", true),
      push("store-mismatch", false),
      { call_id: "other", tool_id: "ls" },
    ];
    const digest = (call: TestCall) => RequestDigest.of(requestOf(call));

    async function written(): Promise<string> {
      const path = join(tempDir(), "args.aarl");
      const decisions = await writeSession(path, ARGS, calls);
      expect(decisions.map((d) => d.code)).toEqual(["denied", "denied", "allowed", "denied", "allowed", "allowed"]);
      return path;
    }

    it("[M16.3] missing_envelope when absent or redacted, envelope_digest_mismatch when the bytes do not hash to the record", async () => {
      const path = await written();
      const [present, , altered, redacted, mismatch] = calls;
      if (present === undefined || altered === undefined || redacted === undefined || mismatch === undefined) throw new Error("calls");
      const entries = new Map<string, EnvelopeRead>([
        [digest(present), { code: "present", bytes: requestOf(present) }],
        // The store hands back other bytes than were recorded: recheck hashes them itself.
        [digest(altered), { code: "present", bytes: new TextEncoder().encode('{"force":true}') }],
        [digest(redacted), { code: "redacted", redactedAt: "2025-01-01T00:00:00Z", reason: "held a token" }],
        [digest(mismatch), { code: "digest_mismatch", expected: digest(mismatch), found: "f".repeat(64) }],
      ]);
      const envelope = fakeEnvelope(entries);
      const verdicts = await collect(path, { code: "policy", policy: ARGS }, { envelope });
      expect(byCall(verdicts)).toEqual({
        present: "unchanged denied",
        missing: "indeterminate missing_envelope",
        altered: "indeterminate envelope_digest_mismatch",
        redacted: "indeterminate missing_envelope",
        "store-mismatch": "indeterminate envelope_digest_mismatch",
        other: "unchanged allowed",
      });
      expect(verdicts[1]).toMatchObject({ reason: { code: "missing_envelope", detail: { code: "missing" } } });
      expect(verdicts[2]).toMatchObject({
        reason: { code: "envelope_digest_mismatch", expected: digest(altered), found: RequestDigest.of(new TextEncoder().encode('{"force":true}')) },
      });
      expect(verdicts[3]).toMatchObject({
        reason: { code: "missing_envelope", detail: { code: "redacted", redacted_at: "2025-01-01T00:00:00Z", reason: "held a token" } },
      });
      expect(verdicts[4]).toMatchObject({ reason: { code: "envelope_digest_mismatch", found: "f".repeat(64) } });
      // The call the argument matcher could not concern (another tool) was not looked up.
      expect(envelope.asked).toHaveLength(5);
    });

    it("[M16.3] missing_envelope for every call a matcher concerns when no Envelope is given", async () => {
      const path = await written();
      const verdicts = await collect(path, { code: "policy", policy: ARGS });
      expect(verdicts.map(describeRecheck)).toEqual([...Array<string>(5).fill("indeterminate missing_envelope"), "unchanged allowed"]);
      expect(verdicts[0]).toMatchObject({ reason: { detail: { code: "no_lookup" } } });
    });

    it("[M16.3] request bytes that settle a call are fetched even when a rule lacks decision_axes.fs", async () => {
      const path = join(tempDir(), "settle.aarl");
      const set = policy(
        "version: 2",
        "rules:",
        "  - {id: fs-allow, action: allow, tool: git.push, fs: {path_prefix: /repo/}}",
        "  - {id: no-force, action: deny, tool: git.push, args: [{pointer: /force, exact: true}]}",
      );
      const forced = push("forced", true);
      const [decision] = await writeSession(path, set, [forced]);
      expect(decision).toMatchObject({ code: "denied", cause: { code: "rule" } });
      const entries = new Map<string, EnvelopeRead>([[digest(forced), { code: "present", bytes: requestOf(forced) }]]);
      expect(byCall(await collect(path, { code: "policy", policy: set }, { envelope: fakeEnvelope(entries) }))).toEqual({ forced: "unchanged denied" });
      expect(byCall(await collect(path, { code: "policy", policy: set }))).toEqual({ forced: "indeterminate missing_envelope" });
    });

    it("[M16.3] a set whose argument matchers cannot win for a call rechecks it without the Envelope", async () => {
      const path = await written();
      const denyFirst = policy(
        "version: 2",
        "rules:",
        "  - {id: no-git, action: deny, tool: git.push}",
        "  - {id: park-force, action: pending_approval, tool: git.push, args: [{pointer: /force, exists: true}]}",
      );
      const envelope = fakeEnvelope(new Map());
      const verdicts = await collect(path, { code: "policy", policy: denyFirst }, { envelope });
      expect(envelope.asked).toHaveLength(0);
      expect(verdicts.slice(0, 5).map(describeRecheck)).toEqual([
        "unchanged denied",
        "unchanged denied",
        "newly_blocked was=allowed now=denied",
        "unchanged denied",
        "newly_blocked was=allowed now=denied",
      ]);
    });
  });
});

describe("reading the file (SPEC §16.1)", () => {
  it("[M16.1] streams: the first verdict comes before the file is read to its end", async () => {
    // Recheck judges no chain, so one real outcome row, repeated, makes a big file quickly.
    const dir = tempDir();
    const one = join(dir, "one.aarl");
    await writeSession(one, RECORDED, [{ call_id: "c", tool_id: "fs.read", axes: { role: "r" } }]);
    const outcomeRow = readFileSync(one, "utf8").split("\n")[2] ?? "";
    expect(outcomeRow).toContain('"line_type":"outcome"');
    const path = join(dir, "big.aarl");
    writeFileSync(path, `${Array.from({ length: 4000 }, () => outcomeRow).join("\n")}\n`);
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(1 << 20);
    let read = 0;
    const stream = recheck(path, { code: "policy", policy: RECORDED }, { onRead: (bytes) => (read = bytes) });
    const first = await stream.next();
    expect(first.done).toBe(false);
    expect(read).toBeLessThan(size);
    await stream.return(undefined);
  });

  it("[M16.1] sessions are counted over open Lines; a Line with no seq or call_id reports 0 and -", async () => {
    const text = [
      '{"line_type":"outcome","schema_version":1}',
      '{"line_type":"open","seq":0}',
      '{"phase":"outcome","schema_version":7,"call_id":"x"}',
      '{"line_type":"open","phase":"outcome","seq":0}',
      '{"line_type":"intent","phase":"outcome","seq":1,"call_id":"i"}',
      '{"line_type":"outcome","schema_version":2.0,"seq":4}',
      "",
    ].join("\n");
    const lines: string[] = [];
    for await (const v of recheckBytes(Buffer.from(text), { code: "policy", policy: RECORDED })) lines.push(describeRecheckLine(v));
    expect(lines).toEqual([
      "call - session 0 seq 0: indeterminate unknown_policy_set_hash",
      "call x session 0 seq 0: indeterminate unknown_policy_set_hash",
      "call - session 1 seq 4: indeterminate unknown_policy_set_hash",
    ]);
  });
});

describe("summary and exit codes (SPEC §16.5)", () => {
  const verdictsOf = async (set: PolicySet, calls: readonly TestCall[]) => {
    const path = join(tempDir(), "s.aarl");
    await writeSession(path, RECORDED, calls);
    return summarizeRecheck(recheck(path, { code: "policy", policy: set }));
  };

  it("[M16.5] all unchanged, changed, indeterminate (outranking a change); nothing rechecked is its own answer", async () => {
    const unchanged = await verdictsOf(RECORDED, CALLS);
    expect(unchanged).toMatchObject({ outcomes: 4, unchanged: 4, indeterminate: 0 });
    expect(recheckConclusion(unchanged)).toEqual({ code: "all_unchanged" });

    const changed = await verdictsOf(policy("default: deny"), CALLS);
    expect(changed).toMatchObject({ outcomes: 4, unchanged: 1, newly_blocked: 3 });
    expect(recheckConclusion(changed)).toEqual({ code: "changed" });

    const mixed = await verdictsOf(
      policy("rules:", "  - {id: slow, action: rate_limit, tool: fs.read, rate: {max: 1, per_seconds: 1}}", "  - {id: d, action: deny, tool: fs.list}"),
      CALLS,
    );
    expect(mixed).toMatchObject({ outcomes: 4, indeterminate: 1, newly_blocked: 1, newly_allowed: 2, newly_parked: 0 });
    expect(mixed.reasons).toEqual({ missing_envelope: 0, envelope_digest_mismatch: 0, unknown_policy_set_hash: 0, no_binding: 0, rate_limit_unevaluable: 1 });
    expect(recheckConclusion(mixed)).toEqual({ code: "indeterminate" });

    const empty = await summarizeRecheck(recheckBytes(Buffer.from('{"line_type":"open","seq":0}\n'), { code: "policy", policy: RECORDED }));
    expect(nothingRechecked(empty)).toBe(true);
    expect(recheckConclusion(empty)).toEqual({ code: "nothing_rechecked" });
  });
});
