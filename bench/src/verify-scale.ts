import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SigningKey } from "@aegis/format";
import { writeLargeRecord } from "./large-record.js";
import { median } from "./measure.js";

/**
 * `npm run bench:verify-scale [-- --lines N --big-lines M]` (issue 31, ADR 0027): how far the
 * split walk frees the calling thread, and whether memory follows the thread count.
 *
 *  - the calling thread's own CPU time while it verifies N Lines (default 100,000), read from
 *    /proc/self/task/<tid>/stat, at 1, 2, 4, 8 and 15 threads, against the CPU time of the
 *    whole verification on that one thread (`--threads 0`), start-up left out: the target is
 *    at most 1/16, so that sixteen threads can be kept busy;
 *  - the same for `aegis verify --threads N`, the command a user runs, its start-up (the same
 *    command on a record of 4 Lines) taken off;
 *  - peak RSS of each of those processes, the threads included: the target is under 150 MB;
 *  - peak RSS for M Lines (default 10,000,000) at 15 threads, the most pieces in flight
 *    (0 skips it; `npm run bench:verify` measures the same record size on every core).
 *
 * Each verification runs in a process of its own, three times; the medians are shown, since a
 * thread's CPU is read in ticks of 10 ms and moves with what else the machine runs. Nothing
 * is asserted but the verdicts.
 */
const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} wants a whole number`);
  return value;
};
const LINES = arg("--lines", 100_000);
const BIG_LINES = arg("--big-lines", 10_000_000);
const THREADS = [1, 2, 4, 8, 15];
const BIG_THREADS = 15;
const RUNS = 3;

interface ChildReport {
  readonly verdict: string;
  readonly lines: number;
  readonly seconds: number;
  readonly mainCpuSeconds: number;
  readonly cpuSeconds: number;
  readonly maxRssKiB: number;
}

const child = fileURLToPath(new URL("./verify-scale-child.js", import.meta.url));
function verify(path: string, threads: number): ChildReport {
  const report = JSON.parse(execFileSync(process.execPath, [child, path, String(threads)], { encoding: "utf8" })) as ChildReport;
  if (!report.verdict.startsWith("Verified")) throw new Error(`bench record did not verify at ${threads} threads: ${report.verdict}`);
  return report;
}

/** Medians of `RUNS` runs of `run`, member by member. */
function medianOf(run: () => ChildReport): ChildReport {
  const runs = Array.from({ length: RUNS }, run);
  const of = (pick: (r: ChildReport) => number): number => median(runs.map(pick));
  const first = runs[0];
  if (first === undefined) throw new Error("no run");
  return {
    verdict: first.verdict,
    lines: first.lines,
    seconds: of((r) => r.seconds),
    mainCpuSeconds: of((r) => r.mainCpuSeconds),
    cpuSeconds: of((r) => r.cpuSeconds),
    maxRssKiB: of((r) => r.maxRssKiB),
  };
}

const BIN = fileURLToPath(new URL("../../packages/cli/bin/aegis.js", import.meta.url));
const EXIT_CPU = fileURLToPath(new URL("./exit-cpu.js", import.meta.url));
/** `aegis verify --threads N` of `path`: its calling thread's CPU seconds, start-up included. */
function cliCpu(path: string, threads: number, cpuFile: string): number {
  execFileSync(process.execPath, ["--import", EXIT_CPU, BIN, "verify", "--threads", String(threads), path], {
    env: { ...process.env, AEGIS_BENCH_CPU_FILE: cpuFile },
    stdio: ["ignore", "ignore", "ignore"],
  });
  return Number(readFileSync(cpuFile, "utf8"));
}

const dir = mkdtempSync(join(tmpdir(), "aegis-verify-scale-"));
const key = SigningKey.generate();
const n = (x: number): string => x.toLocaleString("en-US");
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
try {
  process.stdout.write(`machine: ${cpus()[0]?.model ?? "?"}, ${availableParallelism()} cores this process may use, Node ${process.version}\n`);
  const path = join(dir, "scale.aarl");
  const written = await writeLargeRecord(path, LINES, key);
  process.stdout.write(`record: ${n(LINES)} Lines, ${n(written.signed)} signed, ${(written.bytes / 1e6).toFixed(1)} MB\n\n`);
  const alone = medianOf(() => verify(path, 0));
  process.stdout.write(
    `--threads 0 (all on the calling thread): ${alone.mainCpuSeconds.toFixed(2)} s of its CPU, ${alone.seconds.toFixed(2)} s wall, peak RSS ${mib(alone.maxRssKiB)}\n\n`,
  );
  process.stdout.write(
    "| threads | calling thread CPU | share of --threads 0 | target 1/16 | process CPU | wall | peak RSS | under 150 MB |\n|---|---|---|---|---|---|---|---|\n",
  );
  for (const threads of THREADS) {
    const r = medianOf(() => verify(path, threads));
    const share = r.mainCpuSeconds / alone.mainCpuSeconds;
    process.stdout.write(
      `| ${threads} | ${r.mainCpuSeconds.toFixed(2)} s | ${share.toFixed(3)} (1/${(1 / share).toFixed(1)}) | ${share <= 1 / 16 ? "met" : "not met"} | ${r.cpuSeconds.toFixed(2)} s | ${r.seconds.toFixed(2)} s | ${mib(r.maxRssKiB)} | ${r.maxRssKiB * 1024 < 150e6 ? "yes" : "no"} |\n`,
    );
  }
  // The CLI, as a user runs it: its calling thread's CPU less what the same command spends
  // on a record of 4 Lines (start-up: modules, arguments, output; the threads do not start).
  const small = join(dir, "small.aarl");
  await writeLargeRecord(small, 4, key);
  const cpuFile = join(dir, "cpu");
  process.stdout.write(
    `\n\`aegis verify --threads N\` (the CLI, ${RUNS} runs each, medians; start-up, the same command on 4 Lines, taken off)\n\n| threads | calling thread CPU | start-up | share of --threads 0 | target 1/16 |\n|---|---|---|---|---|\n`,
  );
  for (const threads of THREADS) {
    const whole = median(Array.from({ length: RUNS }, () => cliCpu(path, threads, cpuFile)));
    const startUp = median(Array.from({ length: RUNS }, () => cliCpu(small, threads, cpuFile)));
    const share = (whole - startUp) / alone.mainCpuSeconds;
    process.stdout.write(
      `| ${threads} | ${whole.toFixed(2)} s | ${startUp.toFixed(2)} s | ${share.toFixed(3)} (1/${(1 / share).toFixed(1)}) | ${share <= 1 / 16 ? "met" : "not met"} |\n`,
    );
  }
  rmSync(path);
  if (BIG_LINES > 0) {
    const big = join(dir, "big.aarl");
    const bigWritten = await writeLargeRecord(big, BIG_LINES, key);
    const r = verify(big, BIG_THREADS);
    process.stdout.write(
      `\n${n(BIG_LINES)} Lines (${(bigWritten.bytes / 1e9).toFixed(2)} GB) at ${BIG_THREADS} threads: peak RSS ${mib(r.maxRssKiB)} (${r.maxRssKiB * 1024 < 150e6 ? "under" : "over"} 150 MB), ${r.seconds.toFixed(0)} s wall\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
