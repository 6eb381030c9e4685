import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SigningKey } from "@aegis/format";
import { writeLargeRecord } from "./large-record.js";

/**
 * `npm run bench:verify-scale [-- --lines N --big-lines M]` (issue 31, ADR 0027): how far the
 * split walk frees the calling thread, and whether memory follows the thread count.
 *
 *  - the calling thread's own CPU time while it verifies N Lines (default 100,000), read from
 *    /proc/self/task/<tid>/stat, at 1, 2, 4, 8 and 15 threads, against the CPU time of the
 *    whole verification on that one thread (`--threads 0`), start-up left out: the target is
 *    at most 1/16, so that sixteen threads can be kept busy;
 *  - peak RSS of each of those processes, the threads included: the target is under 150 MB;
 *  - peak RSS for M Lines (default 10,000,000) at 15 threads, the most pieces in flight
 *    (0 skips it; `npm run bench:verify` measures the same record size on every core).
 *
 * Each verification runs in a process of its own. Nothing is asserted but the verdicts.
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

const dir = mkdtempSync(join(tmpdir(), "aegis-verify-scale-"));
const key = SigningKey.generate();
const n = (x: number): string => x.toLocaleString("en-US");
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
try {
  process.stdout.write(`machine: ${cpus()[0]?.model ?? "?"}, ${availableParallelism()} cores this process may use, Node ${process.version}\n`);
  const path = join(dir, "scale.aarl");
  const written = await writeLargeRecord(path, LINES, key);
  process.stdout.write(`record: ${n(LINES)} Lines, ${n(written.signed)} signed, ${(written.bytes / 1e6).toFixed(1)} MB\n\n`);
  const alone = verify(path, 0);
  process.stdout.write(
    `--threads 0 (all on the calling thread): ${alone.mainCpuSeconds.toFixed(2)} s of its CPU, ${alone.seconds.toFixed(2)} s wall, peak RSS ${mib(alone.maxRssKiB)}\n\n`,
  );
  process.stdout.write(
    "| threads | calling thread CPU | share of --threads 0 | target 1/16 | process CPU | wall | peak RSS | under 150 MB |\n|---|---|---|---|---|---|---|---|\n",
  );
  for (const threads of THREADS) {
    const r = verify(path, threads);
    const share = r.mainCpuSeconds / alone.mainCpuSeconds;
    process.stdout.write(
      `| ${threads} | ${r.mainCpuSeconds.toFixed(2)} s | ${share.toFixed(3)} (1/${(1 / share).toFixed(1)}) | ${share <= 1 / 16 ? "met" : "not met"} | ${r.cpuSeconds.toFixed(2)} s | ${r.seconds.toFixed(2)} s | ${mib(r.maxRssKiB)} | ${r.maxRssKiB * 1024 < 150e6 ? "yes" : "no"} |\n`,
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
