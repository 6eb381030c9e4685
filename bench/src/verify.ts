import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SigningKey } from "@aegis/format";
import { verifyStrict, verifyingKey } from "@aegis/format/internal";
import { writeLargeRecord } from "./large-record.js";
import { fmt, median, timeSync, verdict } from "./measure.js";

/**
 * `npm run bench:verify [-- --lines N --big-lines M --files F --file-lines L --rounds R]`: the verifier
 * on every core, each figure beside the same run's cost of the signature checks it must
 * make, done one after another on one core (the primitive limit: a verifier cannot check a
 * Line's signature faster than the primitive, and the walk shares the cores).
 *
 *  - verify of N Lines (default 1,000,000; half signed), on threads (R rounds, default 5,
 *    each beside the limit measured right after it) and on one thread, and the same checks
 *    made on every core at once: the floor this machine's cores give together;
 *  - the same for a 10,000-Line file, and where the threads start to pay, through the CLI;
 *  - peak RSS for N and M Lines (default 10,000,000);
 *  - recheck through the CLI (verify included), against verify through the CLI;
 *  - verify of F files of L Lines (default 1,000 of 1,000) through the CLI, several at once.
 *
 * Nothing is asserted but the verdicts, so the bench cannot time a verifier that checked nothing.
 */
const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} wants a whole number`);
  return value;
};
const LINES = arg("--lines", 1_000_000);
const BIG_LINES = arg("--big-lines", 10_000_000);
const FILES = arg("--files", 1000);
const FILE_LINES = arg("--file-lines", 1000);
const ROUNDS = Math.max(1, arg("--rounds", 5));

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const BIN = fileURLToPath(new URL("../../packages/cli/bin/aegis.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "aegis-verify-bench-"));
const key = SigningKey.generate();
const n = (x: number): string => x.toLocaleString("en-US");

/** The signature check the verifier makes per signed Line, median, on this core now. */
function signatureCost(): number {
  const message = Buffer.alloc(560, 0x61);
  const signature = key.sign(message);
  const vk = verifyingKey(key.publicKey);
  if (typeof vk === "string") throw new Error("bench key does not decode");
  return timeSync(() => verifyStrict(vk, message, signature), 2000);
}

interface ChildReport {
  readonly verdict: string;
  readonly lines: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly maxRssKiB: number;
}

function verifyChild(path: string, threads?: number): ChildReport {
  const report = JSON.parse(
    execFileSync(process.execPath, [here("./verify-child.js"), path, ...(threads === undefined ? [] : [String(threads)])], { encoding: "utf8" }),
  ) as ChildReport;
  if (!report.verdict.startsWith("Verified")) throw new Error(`verify of ${path}: ${report.verdict}`);
  return report;
}

interface Checks {
  readonly checks: number;
  readonly seconds: number;
}

/** The record's signature checks, back to back on one core (signatures-child.ts). */
function signatureChecks(path: string): Checks {
  return JSON.parse(execFileSync(process.execPath, [here("./signatures-child.js"), path], { encoding: "utf8" })) as Checks;
}

/**
 * The same checks made on every core at once, one process a core: cores that share the
 * machine underneath (as a cloud's virtual cores may) each check slower than one alone, and
 * the verifier can be no faster than this. Its seconds, per core, for all of the checks.
 */
async function signatureChecksOnEveryCore(path: string): Promise<number[]> {
  const run = promisify(execFile);
  const children = Array.from({ length: availableParallelism() }, () => run(process.execPath, [here("./signatures-child.js"), path], { encoding: "utf8" }));
  return (await Promise.all(children)).map(({ stdout }) => (JSON.parse(stdout) as Checks).seconds);
}

/** Wall seconds of one CLI run; its exit code must be `want`. */
function cli(argv: readonly string[], want = 0): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [BIN, ...argv], { encoding: "utf8", maxBuffer: 1 << 30 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (run.status !== want) throw new Error(`aegis ${argv.join(" ")}: exit ${run.status}, want ${want}\n${run.stderr}`);
  return seconds;
}

const mb = (kib: number): string => `${((kib * 1024) / 1e6).toFixed(0)} MB`;

try {
  console.log(`aegis verify bench (node ${process.version}, ${availableParallelism()} cores, ${new Date().toISOString().slice(0, 10)})`);
  console.log("");
  const sig = signatureCost();
  console.log(`primitive, median, this run: Ed25519 verify (strict) of a signed Line ${fmt(sig)}`);
  console.log("");

  // N Lines, on threads and on one thread, each in a child process of its own.
  const large = join(dir, "large.aarl");
  const written = await writeLargeRecord(large, LINES, key);
  // A shared machine's speed drifts by a third from minute to minute: each round measures
  // the verifier on every core and, right after, the limit (the same signature checks, back
  // to back, on one core), and the ratio is read per round; the median round is reported.
  const rounds = Array.from({ length: ROUNDS }, () => {
    const report = verifyChild(large);
    const checks = signatureChecks(large);
    if (checks.checks !== written.signed) throw new Error(`${checks.checks} signatures checked, ${written.signed} written`);
    return { report, checks, ratio: report.seconds / checks.seconds };
  });
  const byRatio = [...rounds].sort((a, b) => a.ratio - b.ratio);
  const middle = byRatio[Math.floor(byRatio.length / 2)];
  if (middle === undefined) throw new Error("no round");
  const { report: parallel, checks } = middle;
  const sequential = verifyChild(large, 0);
  const limit = (checks.seconds * 1e6) / LINES;
  const perCheck = (checks.seconds * 1e6) / checks.checks;
  const line = (label: string, r: ChildReport): string => {
    const us = (r.seconds * 1e6) / r.lines;
    return `  ${label.padEnd(22)}${fmt(us).padStart(9)}/Line  ${r.seconds.toFixed(1).padStart(6)} s  ${(us / limit).toFixed(2)}x the signature checks on one core  CPU ${((r.cpuSeconds * 1e6) / r.lines).toFixed(1)} µs/Line  peak RSS ${mb(r.maxRssKiB)}`;
  };
  console.log(`verify, ${n(LINES)} Lines (${(written.bytes / 1e6).toFixed(0)} MB, ${n(written.signed)} signed), ${ROUNDS} rounds`);
  console.log(
    `  rounds (every core / the same signature checks back to back on one core): ${rounds.map((r) => `${r.report.seconds.toFixed(1)} s / ${r.checks.seconds.toFixed(1)} s = ${r.ratio.toFixed(2)}x`).join(", ")}`,
  );
  console.log(
    `  the median round: the ${n(checks.checks)} signature checks, one after another on one core: ${checks.seconds.toFixed(1)} s, ${fmt(perCheck)} each (${fmt(limit)}/Line)`,
  );
  console.log(line("on every core", parallel));
  console.log(line("on one thread", sequential));
  const ratio = (parallel.seconds * 1e6) / parallel.lines / limit;
  console.log(`  target ≤ 0.65x the signature checks on one core: ${verdict(ratio <= 0.65)} (${ratio.toFixed(2)}x; the two-core limit is 0.50x)`);
  // What this machine's cores give when all check at once, right after the median round's limit.
  const together = await signatureChecksOnEveryCore(large);
  const shared = median(together) / together.length;
  console.log(
    `  the same checks on all ${together.length} cores at once, a process each: ${together.map((t) => `${t.toFixed(1)} s`).join(", ")} for all of them (${((median(together) / checks.seconds - 1) * 100).toFixed(0)}% slower a core than one alone); split over the cores, ${shared.toFixed(1)} s, ${(shared / checks.seconds).toFixed(2)}x: the floor on this machine`,
  );
  console.log(
    `  the walk's own work beside the signatures, on one thread: ${fmt((sequential.seconds * 1e6) / sequential.lines - limit)}/Line; speed-up on every core ${(sequential.seconds / parallel.seconds).toFixed(2)}x`,
  );
  console.log(`  peak RSS target < 150 MB: ${verdict(parallel.maxRssKiB * 1024 < 150e6)} (${mb(parallel.maxRssKiB)})`);
  console.log("");

  // A 10,000-Line file, and where the threads start to pay, through the CLI (a process's start included).
  console.log("small records through the CLI (`aegis verify`, median of 5 runs each, a process's start included)");
  console.log(`  ${"Lines".padStart(8)}${"one thread".padStart(12)}${"every core".padStart(12)}  ratio to the signature checks on one core`);
  for (const size of [1000, 2000, 5000, 10_000, 20_000, 50_000]) {
    const path = join(dir, `small-${size}.aarl`);
    const { signed } = await writeLargeRecord(path, size, key);
    const one = median(Array.from({ length: 5 }, () => cli(["verify", "--threads", "0", path])));
    const every = median(Array.from({ length: 5 }, () => cli(["verify", path])));
    const checksSeconds = (perCheck * signed) / 1e6;
    console.log(
      `  ${n(size).padStart(8)}${`${(one * 1000).toFixed(0)} ms`.padStart(12)}${`${(every * 1000).toFixed(0)} ms`.padStart(12)}  ${(one / checksSeconds).toFixed(2)}x, ${(every / checksSeconds).toFixed(2)}x`,
    );
  }
  console.log(`  (a file of 16 MiB or more starts the threads at once; a smaller one only after 8,192 signatures checked on the calling thread)`);
  console.log("");

  // Recheck through the CLI, verify included, against verify through the CLI.
  const policy = join(dir, "policy.yaml");
  writeFileSync(
    policy,
    "version: 2\ndefault: deny\nrules:\n  - id: read-workspace\n    action: allow\n    tool: fs.read\n    fs: { path_prefix: /workspace/ }\n",
  );
  // In pairs, verify then recheck, so that a drift in the machine's speed falls on both
  // halves of a ratio; the median pair's ratio is reported.
  const pairs = Array.from({ length: 3 }, () => {
    const alone = cli(["verify", large]);
    const both = cli(["recheck", "--policy", policy, large]);
    return { alone, both, ratio: both / alone };
  }).sort((a, b) => a.ratio - b.ratio);
  const pair = pairs[1] ?? { alone: Number.NaN, both: Number.NaN, ratio: Number.NaN };
  const [verifyCli, recheckCli] = [pair.alone, pair.both];
  console.log(`recheck through the CLI, ${n(LINES)} Lines (${n(written.signed - 2)} calls), 3 pairs (verify, then recheck)`);
  console.log(`  ratios: ${pairs.map((p) => `${p.both.toFixed(1)} s / ${p.alone.toFixed(1)} s = ${p.ratio.toFixed(2)}x`).join(", ")}; the median pair:`);
  console.log(`  aegis verify   ${verifyCli.toFixed(1)} s`);
  console.log(`  aegis recheck  ${recheckCli.toFixed(1)} s, verify included, one read of the file`);
  console.log(`  target ≤ 1.2x verify alone: ${verdict(recheckCli <= 1.2 * verifyCli)} (${(recheckCli / verifyCli).toFixed(2)}x)`);
  console.log("");

  // Many files, several at once.
  const fleet = join(dir, "fleet");
  mkdirSync(fleet);
  const one = join(dir, "one.aarl");
  const { signed: perFile } = await writeLargeRecord(one, FILE_LINES, key);
  for (let i = 0; i < FILES; i++) copyFileSync(one, join(fleet, `agent-${String(i).padStart(4, "0")}.aarl`));
  const fleetEvery = cli(["verify", "--recursive", fleet]);
  const fleetOne = cli(["verify", "--threads", "0", "--recursive", fleet]);
  const fleetLimit = (perCheck * perFile * FILES) / 1e6;
  console.log(`verify of ${n(FILES)} files of ${n(FILE_LINES)} Lines through the CLI (aegis verify --recursive)`);
  console.log(
    `  every core   ${fleetEvery.toFixed(1)} s, ${n(Math.round(FILES / fleetEvery))} files/s, ${(fleetEvery / fleetLimit).toFixed(2)}x the signature checks on one core`,
  );
  console.log(`  one thread   ${fleetOne.toFixed(1)} s, ${n(Math.round(FILES / fleetOne))} files/s, ${(fleetOne / fleetLimit).toFixed(2)}x`);
  console.log("");
  rmSync(fleet, { recursive: true, force: true });
  rmSync(large);

  // Peak RSS of a record ten times larger.
  if (BIG_LINES > 0) {
    const big = join(dir, "big.aarl");
    const bigWritten = await writeLargeRecord(big, BIG_LINES, key);
    const report = verifyChild(big);
    console.log(`verify, ${n(BIG_LINES)} Lines (${(bigWritten.bytes / 1e9).toFixed(1)} GB), on every core`);
    console.log(line("", report).replace(/^ {2} +/, "  "));
    console.log(
      `  peak RSS target < 150 MB: ${verdict(report.maxRssKiB * 1024 < 150e6)} (${mb(report.maxRssKiB)}); at ${n(LINES)} Lines: ${mb(parallel.maxRssKiB)}`,
    );
    rmSync(big);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
