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
