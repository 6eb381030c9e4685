import { readFileSync, readdirSync } from "node:fs";

/** Small timing helpers: medians of repeated samples, in microseconds. */
export function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Median µs of `fn` over `n` runs, after `warm` untimed runs. */
export function timeSync(fn: () => void, n: number, warm = Math.min(200, n)): number {
  for (let i = 0; i < warm; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return median(samples);
}

export function fmt(us: number): string {
  return `${us >= 100 ? us.toFixed(0) : us.toFixed(1)} µs`;
}

export function verdict(ok: boolean): string {
  return ok ? "PASS" : "MISS";
}

/**
 * The CPU time a process has used so far, in µs: the sum over every thread it has now (V8's
 * compiler and collector threads, libuv's pool), from /proc; undefined where it cannot be read.
 */
export function processCpuUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${String(pid)}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${String(pid)}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // A thread that ended between the listing and the read.
      }
    }
    return ns / 1000;
  } catch {
    return undefined;
  }
}
