import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * detachedString is what keeps the walk's memory flat when it holds `call_id`s (walk.ts,
 * unfinished-calls.ts): a part of a row kept as it is keeps the whole row. Checked in a
 * process of its own, with the collector run by hand, on the built module the verifier runs.
 */
const TEXT = fileURLToPath(new URL("../dist/wire/text.js", import.meta.url));

function heapAfterKeeping(detach: boolean): number {
  const script = `
    const { detachedString } = await import(${JSON.stringify(TEXT)});
    const kept = [];
    for (let i = 0; i < 100; i++) {
      const row = "x".repeat(1 << 20) + String(i);
      const part = row.slice(1000, 1030);
      kept.push(${detach ? "detachedString(part)" : "part"});
    }
    globalThis.gc();
    globalThis.gc();
    process.stdout.write(String(process.memoryUsage().heapUsed) + " " + kept.length);
  `;
  const run = spawnSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" });
  expect(run.status, run.stderr).toBe(0);
  const [heap, count] = run.stdout.split(" ").map(Number);
  expect(count).toBe(100);
  return heap ?? Number.NaN;
}

describe("detachedString", () => {
  it("keeps a part of a 1 MiB row without the row: a hundred such parts hold well under 100 MiB", () => {
    // The control shows the test can fail: the parts themselves keep their rows.
    expect(heapAfterKeeping(false)).toBeGreaterThan(100 * 2 ** 20);
    expect(heapAfterKeeping(true)).toBeLessThan(20 * 2 ** 20);
  });
});
