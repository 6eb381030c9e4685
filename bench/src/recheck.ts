import { execFileSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PrevHash, RequestDigest, SigningKey, type OutcomePayload } from "@aegis/format";
import { sealLine } from "@aegis/format/internal";
import { decide, parsePolicySet, type CallAxes, type Decision, type RecheckVerdict } from "@aegis/policy";
import { compareRecorded, type NowClass, matchedRuleId, type RecheckSummary } from "@aegis/policy/internal";
import { fmt } from "./measure.js";

/**
 * `node bench/dist/recheck.js [--lines N] [--cpu-prof DIR]`: recheck over a record of N
 * lines (default 1,000,000): one Session of calls, each an intent and a signed outcome that
 * records what `decide` returned under a version-2 Policy Set. Three measurements, each in
 * a child process of its own so that peak RSS is that measurement's alone:
 *
 *  (a) recheck under the set the record was written under (every verdict `unchanged`),
 *  (b) recheck under a stricter edit of it (some `newly_blocked`),
 *  (c) verify of the same file, for comparison.
 *
 * Nothing about speed is asserted; the counts are, so the bench cannot measure nothing.
 * With `--cpu-prof DIR`, each child writes a V8 CPU profile there (the timings then carry
 * the profiler's overhead).
 */
const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < 4) throw new Error(`${name} wants an integer of at least 4`);
  return value;
};
const argText = (name: string): string | undefined => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  if (value === undefined) throw new Error(`${name} wants a value`);
  return value;
};
const REQUESTED_LINES = argValue("--lines", 1_000_000);
const PROFILE_DIR = argText("--cpu-prof");
// open + (intent, outcome) per call + close.
const CALLS = Math.floor((REQUESTED_LINES - 2) / 2);
const LINES = 2 * CALLS + 2;

/** The set the record is written under: allow by path prefix, deny by tool and by path, a park, a net allow, default deny. */
const RECORDED_YAML = `version: 2
default: deny
rules:
  - id: read-workspace
    action: allow
    tool: fs.read
    fs: { path_prefix: /workspace/ }
  - id: no-secrets
    action: deny
    tool: fs.read
    fs: { path_prefix: /workspace/secrets/ }
    reason: secrets stay out of the agent's reach
  - id: write-workspace
    action: allow
    tool: fs.write
    fs: { path_prefix: /workspace/ }
    limits: { max_wall_ms: 5000 }
  - id: no-shell
    action: deny
    tool: shell.exec
  - id: park-push
    action: pending_approval
    tool: git.push
  - id: allow-api
    action: allow
    tool: http.get
    net: { host_suffix: .example.com, ports: [443] }
`;

/** A stricter edit: writes only under /workspace/src/, and pushes denied outright. */
const STRICTER_YAML = RECORDED_YAML.replace(
  "    tool: fs.write\n    fs: { path_prefix: /workspace/ }",
  "    tool: fs.write\n    fs: { path_prefix: /workspace/src/ }",
).replace("  - id: park-push\n    action: pending_approval", "  - id: park-push\n    action: deny");
if (STRICTER_YAML === RECORDED_YAML) throw new Error("the stricter edit did not apply");

const recordedSet = parsePolicySet(RECORDED_YAML);
const stricterSet = parsePolicySet(STRICTER_YAML);

interface Call {
  readonly tool_id: string;
  readonly axes: CallAxes;
}

/** The i-th call: a spread of tools and paths, mixed by a multiplicative hash so neighbours differ. */
function callAt(i: number): Call {
  const bucket = (Math.imul(i + 1, 2654435761) >>> 0) % 20;
  const common = { role: "agent", session: "bench-session" };
  const fs = (tool: string, raw: string, canonical: string): Call => ({
    tool_id: tool,
    axes: { ...common, capability: tool, fs: { path_raw: raw, path_canonical: canonical } },
  });
  const net = (host: string, port: number): Call => ({ tool_id: "http.get", axes: { ...common, capability: "http.get", net: { host, port } } });
  if (bucket < 8) return fs("fs.read", `./src/mod-${i % 997}.ts`, `/workspace/src/mod-${i % 997}.ts`);
  if (bucket === 8) return fs("fs.read", `./secrets/token-${i % 7}`, `/workspace/secrets/token-${i % 7}`);
  if (bucket === 9) return i % 2 === 0 ? fs("fs.read", "/etc/passwd", "/etc/passwd") : fs("fs.read", "~/.ssh/id_ed25519", "/home/agent/.ssh/id_ed25519");
  if (bucket < 13) return fs("fs.write", `./out/report-${i % 101}.md`, `/workspace/out/report-${i % 101}.md`);
  if (bucket === 13) return fs("fs.write", `./src/mod-${i % 997}.ts`, `/workspace/src/mod-${i % 997}.ts`);
  if (bucket === 14) return { tool_id: "shell.exec", axes: { ...common, capability: "shell.exec" } };
  if (bucket === 15) return { tool_id: "git.push", axes: { ...common, capability: "git.push" } };
  // A push resumed under an approval: the park rule lets it through.
  if (bucket === 16) return { tool_id: "git.push", axes: { ...common, capability: "git.push", approval_ref: `apr-bench-${i}` } };
  if (bucket < 19) return net(`api${i % 3}.example.com`, 443);
  return net("collector.evil.test", 80);
}

const nowClass = (d: Decision): NowClass => (d.code === "allowed" ? "allowed" : d.code === "pending_approval" ? "pending_approval" : "denied");
const count = (map: Map<string, number>, key: string): void => {
  map.set(key, (map.get(key) ?? 0) + 1);
};
const n = (x: number): string => x.toLocaleString("en-US");

const dir = mkdtempSync(join(tmpdir(), "aegis-recheck-bench-"));
try {
  const path = join(dir, "large.aarl");
  const recordedPolicy = join(dir, "recorded.yaml");
  const stricterPolicy = join(dir, "stricter.yaml");
  writeFileSync(recordedPolicy, RECORDED_YAML);
  writeFileSync(stricterPolicy, STRICTER_YAML);

  // The record: sealed here, line by line, into one buffered stream with no fsync.
  const key = SigningKey.generate();
  const byRule = new Map<string, number>();
  const expectedStricter = new Map<string, number>();
  let approvals = 0;
  const live = { mintApprovalId: () => `apr-bench-park-${approvals++}` };
  const writeStarted = process.hrtime.bigint();
  const out = createWriteStream(path, { highWaterMark: 1 << 20 });
  let pending: string[] = [];
  let pendingChars = 0;
  const flush = async (): Promise<void> => {
    const text = pending.join("");
    pending = [];
    pendingChars = 0;
    if (!out.write(text)) await new Promise<void>((r) => out.once("drain", () => r()));
  };
  const push = async (line: ReturnType<typeof sealLine>): Promise<void> => {
    pending.push(line.text, "\n");
    pendingChars += line.text.length + 1;
    if (pendingChars >= 1 << 20) await flush();
  };
  let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
  await push(tail);
  let seq = 1;
  for (let i = 0; i < CALLS; i++) {
    const call = callAt(i);
    const callId = `call-${i}`;
    const requestDigest = RequestDigest.of(Buffer.from(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"${call.tool_id}"}}`));
    tail = sealLine({
      schema_version: 2,
      line_type: "intent",
      seq,
      prev_hash: PrevHash.after(tail.lineHash),
      call_id: callId,
      tool_id: call.tool_id,
      request_digest: requestDigest,
    });
    seq++;
    await push(tail);
    const decision = decide(recordedSet, { tool_id: call.tool_id, axes: call.axes }, live);
    count(byRule, matchedRuleId(decision.matched) ?? "(default)");
    count(expectedStricter, compareRecorded(decision.policy.status, nowClass(decide(stricterSet, { tool_id: call.tool_id, axes: call.axes }, live))));
    const outcome: OutcomePayload = {
      call_id: callId,
      tool_id: call.tool_id,
      request_digest: requestDigest,
      policy_set_hash: decision.policy_set_hash,
      policy: decision.policy,
      capability: { status: "denied", reason: "not evaluated" },
      execution: decision.code === "allowed" ? { status: "success" } : { status: "host_denied", reason: "refused by policy" },
      wall_ms: 3 + (i % 40),
      decision_axes: decision.decision_axes,
    };
    tail = sealLine({ ...outcome, schema_version: 2, line_type: "outcome", seq, prev_hash: PrevHash.after(tail.lineHash) }, key);
    seq++;
    await push(tail);
  }
  await push(sealLine({ schema_version: 2, line_type: "close", seq, prev_hash: PrevHash.after(tail.lineHash) }, key));
  await flush();
  await new Promise<void>((r, reject) => out.end(() => r()).on("error", reject));
  const writeSeconds = Number(process.hrtime.bigint() - writeStarted) / 1e9;
  const size = statSync(path).size;

  // Every rule and the default decide some call; below a few hundred calls the spread of
  // callAt cannot promise that, so a tiny run only says so.
  const idle = [...recordedSet.rules.map((r) => r.id), "(default)"].filter((id) => (byRule.get(id) ?? 0) === 0);
  if (idle.length > 0 && CALLS >= 1000) throw new Error(`no call was decided by ${idle.join(", ")}: the record does not exercise the whole set`);

  console.log(`aegis recheck bench (node ${process.version}, ${new Date().toISOString().slice(0, 10)})`);
  console.log("");
  if (LINES !== REQUESTED_LINES) console.log(`(${n(REQUESTED_LINES)} lines asked for; ${n(LINES)} written, so that every call has its outcome)`);
  console.log(
    `record: ${n(LINES)} lines, ${(size / 1e6).toFixed(0)} MB, one Session of ${n(CALLS)} calls (unsigned intent + signed outcome); written in ${writeSeconds.toFixed(1)} s`,
  );
  console.log(`  calls by the rule that decided them, under the recorded set (${recordedSet.rules.length} rules, default ${recordedSet.default}):`);
  console.log(`    ${[...byRule.entries()].map(([id, c]) => `${id} ${n(c)}`).join(", ")}`);
  if (idle.length > 0) console.log(`    (too few calls for every rule: none decided by ${idle.join(", ")})`);
  if (PROFILE_DIR !== undefined) console.log(`  CPU profiles go to ${resolve(PROFILE_DIR)}; the timings below carry the profiler's overhead`);
  console.log("");

  const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
  const run = (script: string, scriptArgs: readonly string[], profileName: string): string => {
    const profile = PROFILE_DIR === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", resolve(PROFILE_DIR), "--cpu-prof-name", `${profileName}.cpuprofile`];
    return execFileSync(process.execPath, [...profile, here(script), ...scriptArgs], { encoding: "utf8" });
  };
  type RecheckReport = { summary: RecheckSummary; skipped: number; seconds: number; maxRssKiB: number };
  type VerifyReport = { verdict: string; lines: number; seconds: number; maxRssKiB: number };
  const same = JSON.parse(run("./recheck-child.js", [path, recordedPolicy], "recheck-same")) as RecheckReport;
  const stricter = JSON.parse(run("./recheck-child.js", [path, stricterPolicy], "recheck-stricter")) as RecheckReport;
  const verify = JSON.parse(run("./verify-child.js", [path], "verify")) as VerifyReport;

  // The counts are the bench's guard: a recheck that re-evaluated nothing, or something
  // else than the record holds, must fail loudly rather than print a fast time.
  const codes: readonly Exclude<RecheckVerdict["code"], "indeterminate">[] = ["unchanged", "newly_blocked", "newly_allowed", "newly_parked"];
  const tally = (s: RecheckSummary): string => [...codes.map((c) => `${c} ${n(s[c])}`), `indeterminate ${n(s.indeterminate)}`].join(", ");
  if (same.skipped !== 0 || stricter.skipped !== 0) throw new Error(`recheck skipped rows: ${same.skipped} and ${stricter.skipped}`);
  if (same.summary.outcomes !== CALLS || same.summary.unchanged !== CALLS) {
    throw new Error(
      `recheck under the recorded set: ${n(same.summary.unchanged)} unchanged of ${n(same.summary.outcomes)} outcomes; want ${n(CALLS)} of ${n(CALLS)} (${tally(same.summary)})`,
    );
  }
  for (const c of codes) {
    const want = expectedStricter.get(c) ?? 0;
    if (stricter.summary[c] !== want) throw new Error(`recheck under the stricter set: ${c} ${n(stricter.summary[c])}, but decide says ${n(want)}`);
  }
  if (stricter.summary.outcomes !== CALLS || (stricter.summary.newly_blocked === 0 && CALLS >= 1000)) {
    throw new Error(`recheck under the stricter set: ${tally(stricter.summary)}; want ${n(CALLS)} outcomes, some newly_blocked`);
  }
  if (!verify.verdict.toLowerCase().startsWith("verified") || verify.lines !== LINES) throw new Error(`verify: ${verify.verdict}, ${n(verify.lines)} lines`);

  const mb = (kib: number): string => `${((kib * 1024) / 1e6).toFixed(0)} MB`;
  const row = (label: string, seconds: number, outcomes: number, kib: number): string =>
    `${label.padEnd(24)}${outcomes.toLocaleString("en-US").padStart(10)}${seconds.toFixed(1).padStart(9)}${n(Math.round(outcomes / seconds)).padStart(13)}${fmt((seconds * 1e6) / outcomes).padStart(12)}${mb(kib).padStart(10)}`;
  console.log(
    `${"".padEnd(24)}${"outcomes".padStart(10)}${"seconds".padStart(9)}${"calls/s".padStart(13)}${"per call".padStart(12)}${"peak RSS".padStart(10)}`,
  );
  console.log(row("(a) recheck, same set", same.seconds, same.summary.outcomes, same.maxRssKiB));
  console.log(row("(b) recheck, stricter", stricter.seconds, stricter.summary.outcomes, stricter.maxRssKiB));
  console.log(row("(c) verify", verify.seconds, CALLS, verify.maxRssKiB));
  console.log("");
  console.log(`(a) ${n(same.summary.unchanged)} of ${n(same.summary.outcomes)} outcomes unchanged (checked: every one of the ${n(CALLS)} calls)`);
  console.log(`(b) ${tally(stricter.summary)} (checked against decide under the stricter set)`);
  console.log(
    `(c) ${verify.verdict}: ${n(verify.lines)} lines, ${fmt((verify.seconds * 1e6) / verify.lines)}/line, ${n(Math.round(verify.lines / verify.seconds))} lines/s`,
  );
  console.log("");
  console.log(`recheck / verify time: (a) ${(same.seconds / verify.seconds).toFixed(2)}x, (b) ${(stricter.seconds / verify.seconds).toFixed(2)}x`);
  console.log(`recheck / verify peak RSS: (a) ${(same.maxRssKiB / verify.maxRssKiB).toFixed(2)}x, (b) ${(stricter.maxRssKiB / verify.maxRssKiB).toFixed(2)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
