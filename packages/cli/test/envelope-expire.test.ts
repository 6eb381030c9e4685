import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, SigningKey } from "@aegis/format";
import { EnvelopeStore, openEnvelope } from "@aegis/envelope";
import { decide, parsePolicySet } from "@aegis/policy";
import { aegis, tempDir } from "./support.js";

/**
 * `aegis envelope expire` (SPEC §14.12) on records written by our writer with an Envelope,
 * their Lines timed by a clock the test sets, and recheck after it.
 */
const POLICY_YAML = [
  "version: 2",
  "default: allow",
  "rules:",
  "  - { id: no-force, action: deny, tool: git.push, args: [{ pointer: /force, exact: true }] }",
  "",
].join("\n");
const POLICY = parsePolicySet(POLICY_YAML);
const KEY = SigningKey.fromSeed(new Uint8Array(32).fill(33));
const OLD = new Date("2019-03-01T12:00:00.000Z");
const NEW = new Date("2026-06-01T12:00:00.000Z");
const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

interface Call {
  readonly id: string;
  readonly at: Date | undefined;
  readonly request: string;
  readonly response: string;
}

/** c2's request and c4's are the same bytes, so one entry; c1 and c2 are old, c3 and c4 new. */
const CALLS: readonly Call[] = [
  { id: "c1", at: OLD, request: '{"branch":"main","force":false,"n":"c1-request"}', response: "c1-response" },
  { id: "c2", at: OLD, request: '{"branch":"dev","force":false,"n":"shared-request"}', response: "c2-response" },
  { id: "c3", at: NEW, request: '{"branch":"x","force":true,"n":"c3-request"}', response: "c3-response" },
  { id: "c4", at: NEW, request: '{"branch":"dev","force":false,"n":"shared-request"}', response: "c4-response" },
];

async function record(path: string, store: EnvelopeStore, calls: readonly Call[]): Promise<void> {
  let now: Date | undefined = OLD;
  // No clock at all for undated calls: their Lines carry no time (SPEC §13.7).
  const undated = calls.every((c) => c.at === undefined);
  const writer = await RecordWriter.open(path, { key: KEY, envelope: store, clock: undated ? false : () => now ?? OLD });
  for (const call of calls) {
    now = call.at;
    const request = new TextEncoder().encode(call.request);
    const d = decide(POLICY, { tool_id: "git.push", request });
    await writer.beginCall({ call_id: call.id, tool_id: "git.push", policy_set_hash: d.policy_set_hash, request });
    await writer.endCall(call.id, {
      policy: d.policy,
      capability: { status: "denied", reason: "not evaluated" },
      execution: { status: "success" },
      decision_axes: d.decision_axes,
      response: new TextEncoder().encode(call.response),
    });
  }
  await writer.close();
}

async function fixture(): Promise<{ dir: string; store: string; timed: string; undated: string; policy: string }> {
  const dir = tempDir();
  const store = join(dir, "session.envelope");
  const envelope = await EnvelopeStore.open(store);
  const timed = join(dir, "timed.aarl");
  const undated = join(dir, "undated.aarl");
  await record(timed, envelope, CALLS);
  await record(undated, envelope, [{ id: "u1", at: undefined, request: '{"branch":"u","force":false,"n":"undated-request"}', response: "u1-response" }]);
  await envelope.close();
  const policy = join(dir, "policy.yaml");
  writeFileSync(policy, POLICY_YAML);
  return { dir, store, timed, undated, policy };
}

/** Files of the store holding `text`: after expiry, none may hold an expired value. */
function filesHolding(store: string, text: string): string[] {
  return readdirSync(store).filter((n) => readFileSync(join(store, n)).includes(Buffer.from(text)));
}

const expiredOf = (stdout: string): string[] => [...stdout.matchAll(/^(?:would expire|expired) ([0-9a-f]{64}) /gm)].map((m) => m[1] ?? "");

describe("aegis envelope expire (SPEC §14.12)", () => {
  it("[M14.14] removes exactly the entries every Line naming which is older than the date; shared, newer and undated ones stay", async () => {
    const f = await fixture();
    const args = ["envelope", "expire", "--envelope", f.store, "--before", "2020-01-01", "--record", f.timed, "--record", f.undated];
    const gone = [CALLS[0]?.request, CALLS[0]?.response, CALLS[1]?.response].map((t) => sha256(t ?? ""));

    const dry = aegis([...args, "--dry-run"]);
    expect(dry.status, dry.stderr).toBe(0);
    expect(expiredOf(dry.stdout)).toEqual(gone);
    expect(dry.stdout).toMatch(
      /^would expire 3 entries \(\d+ bytes\) named only before 2020-01-01T00:00:00\.000Z; kept 4 named on or after it and 2 named by a Line with no time; 0 already redacted, 0 not in the store$/m,
    );
    const untouched = await openEnvelope(f.store);
    for (const d of gone) expect((await untouched.get(d as never)).code).toBe("present");
    await untouched.close();

    const run = aegis(args);
    expect(run.status, run.stderr).toBe(0);
    expect(expiredOf(run.stdout)).toEqual(gone);
    expect(run.stdout).toMatch(/^expired 3 entries .*; 0 already redacted, 0 not in the store$/m);

    const store = await openEnvelope(f.store);
    for (const call of CALLS) {
      for (const text of [call.request, call.response]) {
        const read = await store.get(sha256(text) as never);
        if (gone.includes(sha256(text))) {
          expect(read, text).toMatchObject({ code: "redacted", reason: "retention" });
          expect(filesHolding(f.store, text), text).toEqual([]);
        } else expect(read.code, text).toBe("present");
      }
    }
    await store.close();
    // The records are untouched: they verify as before.
    for (const path of [f.timed, f.undated]) expect(aegis(["verify", path]).status).toBe(0);
    // Again: nothing more is old enough; what went is already a tombstone.
    expect(aegis(args).stdout).toMatch(/^expired 0 entries .*; 3 already redacted, 0 not in the store$/m);
  });

  it("[M14.14] an entry named only by Lines without a time is never expired; one the records do not name is not either", async () => {
    const f = await fixture();
    const run = aegis(["envelope", "expire", "--envelope", f.store, "--before", "2099-01-01T00:00:00Z", "--record", f.timed]);
    expect(run.status, run.stderr).toBe(0);
    expect(expiredOf(run.stdout)).toHaveLength(7);
    const store = await openEnvelope(f.store);
    // u1's bytes: named by no record given here, and by an undated one.
    expect((await store.get(sha256('{"branch":"u","force":false,"n":"undated-request"}') as never)).code).toBe("present");
    await store.close();
    const undated = aegis(["envelope", "expire", "--envelope", f.store, "--before", "2099-01-01", "--record", f.undated]);
    expect(undated.stdout).toMatch(/^expired 0 entries \(0 bytes\) .*; kept 0 named on or after it and 2 named by a Line with no time;/m);
  });

  it("recheck after expiry reports the expired calls as missing_envelope, with the tombstone's time and reason retention", async () => {
    const f = await fixture();
    expect(aegis(["envelope", "expire", "--envelope", f.store, "--before", "2020-01-01", "--record", f.timed]).status).toBe(0);
    const text = aegis(["recheck", "--policy", f.policy, "--envelope", f.store, f.timed]);
    // c1's request expired; c2's is c4's too, so it stayed; c3 was forced, and was and is refused.
    expect(text.stdout).toBe(
      [
        "call c1 session 0 seq 2: indeterminate missing_envelope",
        "call c2 session 0 seq 4: unchanged allowed",
        "call c3 session 0 seq 6: unchanged denied",
        "call c4 session 0 seq 8: unchanged allowed",
        "",
      ].join("\n"),
    );
    expect(text.status).toBe(3);
    const json = JSON.parse(aegis(["recheck", "--json", "--policy", f.policy, "--envelope", f.store, f.timed]).stdout) as {
      verdicts: { call_id: string; reason?: unknown }[];
    };
    expect(json.verdicts[0]?.reason).toEqual({
      code: "missing_envelope",
      request_digest: sha256(CALLS[0]?.request ?? ""),
      detail: { code: "redacted", redacted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown, reason: "retention" },
    });
  });

  it("refuses a record that does not verify, a bad date and no record, expiring nothing", async () => {
    const f = await fixture();
    const tampered = join(f.dir, "tampered.aarl");
    writeFileSync(tampered, readFileSync(f.timed, "utf8").replace('"c3"', '"c9"'));
    for (const [args, status, message] of [
      [
        ["--before", "2099-01-01", "--record", f.timed, "--record", tampered],
        1,
        /^error: .*tampered\.aarl is not Verified \(Tampered: .*\): nothing was expired\n/,
      ],
      [["--before", "2019-13-01", "--record", f.timed], 1, /^error: --before: "2019-13-01" is no such time/],
      [["--before", "2019-01-01T00:00:00+02:00", "--record", f.timed], 1, /^error: --before: a date in UTC is YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ/],
      [["--before", "2099-01-01"], 1, /^error: envelope expire requires --record/],
      [["--before", "2099-01-01", "--record", join(f.dir, "absent.aarl")], 2, /^error: read .*absent\.aarl: /],
    ] as const) {
      const run = aegis(["envelope", "expire", "--envelope", f.store, ...args]);
      expect(run.status, run.stderr).toBe(status);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe("");
    }
    const store = await openEnvelope(f.store);
    expect((await store.stats()).redacted.count).toBe(0);
    await store.close();
  });
});
