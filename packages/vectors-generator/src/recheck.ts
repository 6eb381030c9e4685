import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EnvelopeStore, openEnvelope, writePack } from "@aegis/envelope";
import { RequestDigest } from "@aegis/format";
import { parsePolicySet } from "@aegis/policy";
import { expire } from "@aegis/envelope/internal";
import { answerVector } from "@aegis/vectors/oracle";
import { PACK_ID, REDACTED_AT, inTemp, writeScenario, type ScriptedCall } from "./scenario.js";
import type { Polarity, VectorSet } from "./vector-set.js";

/** The Policy Set that decided every recorded call below. */
const RECORDED = [
  "version: 2",
  "default: deny",
  "rules:",
  "  - { id: read-workspace, action: allow, tool: fs.read, fs: { path_prefix: /w/ } }",
  "  - { id: park-shell, action: pending_approval, tool: shell.exec }",
  "  - { id: no-post, action: deny, tool: net.post }",
  "  - { id: push, action: allow, tool: git.push }",
];
const withRules = (...rules: string[]): string[] => [...RECORDED.slice(0, 3), ...rules, ...RECORDED.slice(3)];

const CALLS: readonly ScriptedCall[] = [
  { id: "c1", tool: "fs.read", axes: { role: "agent", fs: { path_raw: "a.md", path_canonical: "/w/a.md" } }, request: '{"path":"/w/a.md"}', response: "# a" },
  { id: "c2", tool: "shell.exec", axes: { role: "agent" }, request: '{"cmd":"make"}' },
  { id: "c3", tool: "net.post", axes: { role: "agent" }, request: '{"url":"https://paste.example/"}' },
  { id: "c4", tool: "git.push", axes: { role: "agent" }, request: '{"branch":"main","force":true,"n":"c4-bytes"}' },
];
const c4 = RequestDigest.of(new TextEncoder().encode(CALLS[3]?.request ?? ""));

type Envelope = "none" | "full" | "without_c4" | "c4_altered" | "c4_redacted" | "c4_expired";
type Case = readonly [name: string, polarity: Polarity, spec: readonly string[], description: string, policy: readonly string[], envelope: Envelope];

const NO_FORCE = "  - { id: no-force, action: deny, tool: git.push, args: [{ pointer: /force, exact: true }] }";

const CASES: readonly Case[] = [
  ["unchanged", "positive", ["16.1", "16.2", "16.4", "16.5"], "Rechecked under the set that decided them: every call unchanged.", RECORDED, "none"],
  [
    "newly_blocked",
    "negative",
    ["16.2", "16.4"],
    "A set that refuses the workspace read: the allowed call is newly_blocked.",
    withRules("  - { id: no-read, action: deny, tool: fs.read }"),
    "none",
  ],
  [
    "newly_allowed",
    "negative",
    ["16.2", "16.4"],
    "A set that allows posting: the denied call is newly_allowed.",
    RECORDED.map((l) => l.replace("id: no-post, action: deny", "id: allow-post, action: allow")),
    "none",
  ],
  [
    "newly_parked",
    "negative",
    ["16.2", "16.4"],
    "A set that parks git.push: the allowed call is newly_parked.",
    RECORDED.map((l) => l.replace("id: push, action: allow", "id: review-push, action: pending_approval")),
    "none",
  ],
  [
    "park_to_deny",
    "negative",
    ["16.2"],
    "A parked call that is now denied is newly_blocked.",
    RECORDED.map((l) => l.replace("id: park-shell, action: pending_approval", "id: deny-shell, action: deny")),
    "none",
  ],
  [
    "rate_limit_unevaluable",
    "negative",
    ["16.3", "15.6"],
    "A rate limit now governs the read: its window is in no record.",
    withRules("  - { id: throttle, action: rate_limit, tool: fs.read, fs: { path_prefix: /w/ }, priority: 1, rate: { max: 1, per_seconds: 60 } }"),
    "none",
  ],
  [
    "no_binding",
    "negative",
    ["16.3"],
    "A rule on decision_axes.net now applies to git.push, which bound no net: no_binding.",
    withRules("  - { id: push-host, action: deny, tool: git.push, net: { host: git.example } }"),
    "none",
  ],
  ["missing_envelope_none_given", "negative", ["16.3", "15.2"], "An argument matcher and no Envelope: missing_envelope.", withRules(NO_FORCE), "none"],
  [
    "args_with_envelope",
    "negative",
    ["16.3", "15.2", "9"],
    "An argument matcher reads the request from the Envelope: the forced push is newly_blocked.",
    withRules(NO_FORCE),
    "full",
  ],
  ["missing_envelope_absent", "negative", ["16.3", "14.1"], "The Envelope lacks c4's request: missing_envelope.", withRules(NO_FORCE), "without_c4"],
  [
    "envelope_digest_mismatch",
    "negative",
    ["16.3", "14.1"],
    "c4's request altered in the Envelope: envelope_digest_mismatch.",
    withRules(NO_FORCE),
    "c4_altered",
  ],
  ["missing_envelope_redacted", "negative", ["16.3", "14.8"], "c4's request redacted: missing_envelope.", withRules(NO_FORCE), "c4_redacted"],
  [
    "missing_envelope_expired",
    "negative",
    ["16.3", "14.12"],
    "c4 ran before the cutoff and its request expired (reason retention): missing_envelope, the line the reference writes.",
    withRules(NO_FORCE),
    "c4_expired",
  ],
];

/** For expiry: c1-c3 ran after the cutoff, c4 before it (SPEC §14.12, §13.7). */
const TIMED: readonly ScriptedCall[] = CALLS.map((c) => ({ ...c, at: c.id === "c4" ? "2019-03-01T12:00:00.000Z" : "2026-06-01T12:00:00.000Z" }));

/** The reference's fixtures (external/rust-aegis/recheck): its table of expected results. */
const REFERENCE: readonly (readonly [policy: string, record: string, polarity: Polarity])[] = [
  ["unchanged", "session_clean", "positive"],
  ["new_deny", "session_clean", "negative"],
  ["new_park_same", "session_clean", "positive"],
  ["new_park", "session_clean", "negative"],
  ["new_rate", "session_clean", "negative"],
  ["unchanged", "session", "negative"],
  ["new_deny", "session", "negative"],
];

const U = ["unchanged allowed", "unchanged pending_approval", "unchanged denied", "unchanged allowed"] as const;
const with4 = (clause: string): string[] => [...U.slice(0, 3), clause];

/**
 * Each case's clauses for c1..c4 and its exit code, stated by hand from SPEC §16 (c1 a
 * workspace read allowed, c2 a shell command parked, c3 a post denied, c4 a forced push
 * allowed), independently of the code that computes the vectors; the generator refuses a
 * vector whose computed answer differs.
 */
const STATED: Readonly<Record<string, readonly [clauses: readonly string[], exit: number]>> = {
  unchanged: [U, 0],
  newly_blocked: [["newly_blocked was=allowed now=denied", ...U.slice(1)], 1],
  newly_allowed: [[U[0], U[1], "newly_allowed was=denied now=allowed", U[3]], 1],
  newly_parked: [with4("newly_parked was=allowed"), 1],
  park_to_deny: [[U[0], "newly_blocked was=pending_approval now=denied", U[2], U[3]], 1],
  rate_limit_unevaluable: [["indeterminate rate_limit_unevaluable", ...U.slice(1)], 3],
  no_binding: [with4("indeterminate no_binding"), 3],
  missing_envelope_none_given: [with4("indeterminate missing_envelope"), 3],
  args_with_envelope: [with4("newly_blocked was=allowed now=denied"), 1],
  missing_envelope_absent: [with4("indeterminate missing_envelope"), 3],
  envelope_digest_mismatch: [with4("indeterminate envelope_digest_mismatch"), 3],
  missing_envelope_redacted: [with4("indeterminate missing_envelope"), 3],
  missing_envelope_expired: [with4("indeterminate missing_envelope"), 3],
};

/** SPEC §16: a record our writer wrote, a Policy Set, and optionally a pack, per case. */
export async function recheckVectors(set: VectorSet, source: string): Promise<void> {
  for (const [name, polarity, spec, description, policy, envelope] of CASES) {
    await inTemp(async (dir) => {
      const record = await writeScenario(dir, parsePolicySet(`${RECORDED.join("\n")}\n`), envelope === "c4_expired" ? TIMED : CALLS);
      const base = `recheck/${name}`;
      const recordPath = set.file(`${base}/session.aarl`, record);
      const policyPath = set.file(`${base}/policy.yaml`, `${policy.join("\n")}\n`);
      await writeFile(join(dir, "policy.yaml"), `${policy.join("\n")}\n`);
      let envelopePath: string | null = null;
      if (envelope !== "none") {
        const store = join(dir, "store");
        if (envelope === "c4_redacted") {
          const s = await EnvelopeStore.open(store, { now: () => REDACTED_AT });
          await s.redact(c4, "force-push arguments are confidential").finally(() => s.close());
        }
        if (envelope === "c4_expired") {
          const open = (): Promise<EnvelopeStore> => EnvelopeStore.open(store, { now: () => REDACTED_AT });
          const done = await expire([join(dir, "session.aarl")], "2020-01-01", { code: "redact", open }, () => Promise.resolve());
          if (!done.ok) throw new Error(`the scripted Session cannot be expired under: ${done.refusal.code}`);
        }
        const pack = join(dir, "envelope.pack");
        const src = await openEnvelope(store);
        try {
          const digests = [];
          for await (const entry of src.entries()) if (envelope !== "without_c4" || entry.digest !== c4) digests.push(entry.digest);
          await writePack(src, digests, pack, { id: PACK_ID });
        } finally {
          await src.close();
        }
        if (envelope === "c4_altered") {
          const data = await readFile(pack);
          const at = data.indexOf("c4-bytes");
          data[at] = (data[at] ?? 0) ^ 0x20;
          await writeFile(pack, data);
        }
        envelopePath = set.file(`${base}/envelope.pack`, await readFile(pack));
      }
      const expected = await answerVector({
        kind: "recheck",
        record: join(dir, "session.aarl"),
        policy: join(dir, "policy.yaml"),
        envelope: envelopePath === null ? null : join(dir, "envelope.pack"),
      });
      if ((expected.exit_code === 0) !== (polarity === "positive")) throw new Error(`${base}: ${polarity} case answered ${JSON.stringify(expected)}`);
      // The line is the reference's; the reason's detail says why the bytes are gone (SPEC §14.12).
      if (
        envelope === "c4_expired" &&
        JSON.stringify(expected.reasons[3]) !==
          JSON.stringify({
            code: "missing_envelope",
            request_digest: c4,
            detail: { code: "redacted", redacted_at: REDACTED_AT.toISOString(), reason: "retention" },
          })
      )
        throw new Error(`${base}: reason ${JSON.stringify(expected.reasons[3])}`);
      const answered = [expected.lines.map((l) => l.slice(l.indexOf(": ") + 2)), expected.exit_code];
      if (JSON.stringify(answered) !== JSON.stringify(STATED[name]))
        throw new Error(`${base}: answered ${JSON.stringify(answered)}, stated ${JSON.stringify(STATED[name])}`);
      set.add({
        id: base,
        kind: "recheck",
        description,
        spec,
        flags: [polarity, "recheck"],
        input: { record: recordPath, policy: policyPath, envelope: envelopePath },
        expected,
      });
    });
  }
  for (const [policy, record, polarity] of REFERENCE) {
    const recordPath = `external/rust-aegis/recheck/${record}.jsonl`;
    const policyPath = `external/rust-aegis/recheck/${policy}.yaml`;
    const expected = await answerVector({ kind: "recheck", record: join(source, recordPath), policy: join(source, policyPath), envelope: null });
    set.add({
      id: `recheck/reference_${policy}_${record}`,
      kind: "recheck",
      description: `The Rust reference's fixture: ${policy}.yaml on ${record}.jsonl (its CLI's table of results).`,
      spec: ["16.1", "16.2", "16.3", "16.4", "16.5"],
      flags: [polarity, "recheck", "reference"],
      input: { record: recordPath, policy: policyPath, envelope: null },
      expected,
    });
  }
}
