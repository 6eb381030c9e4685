import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { call } from "./support.js";
import { workspace, wrapMirror, type WrapProcess } from "./wrap-process.js";

/**
 * SPEC §18, ADR 0017: what `aegis wrap` opens or replaces is never a FIFO it would wait on
 * for ever. Each wrap here must exit by itself within the bound, or the test fails.
 */

function mkfifo(path: string): void {
  const made = spawnSync("mkfifo", [path], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`mkfifo ${path}: ${made.stderr}`);
}

/** The wrap's exit, or a failure (and the wrap killed) if it has not exited within `ms`. */
async function exitWithin(wrap: WrapProcess, ms: number): Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      wrap.child.kill("SIGKILL");
      reject(new Error(`wrap did not exit within ${ms} ms; stderr: ${wrap.stderr}`));
    }, ms);
  });
  try {
    return await Promise.race([wrap.finished(), bound]);
  } finally {
    clearTimeout(timer);
  }
}

describe("aegis wrap and files that are not regular files (SPEC §18)", () => {
  it("--checkpoints with a FIFO where the sidecar's temporary file goes: it is replaced, and the checkpoint written", async () => {
    const w = await workspace();
    const sidecar = `${w.audit}.checkpoint`;
    mkfifo(`${sidecar}.tmp`);
    const wrap = wrapMirror(w, ["--checkpoints"]);
    wrap.send(call(1, "echo"));
    await wrap.next();
    wrap.end();
    expect(await exitWithin(wrap, 30_000)).toEqual({ code: 0, signal: null });
    // The final checkpoint covers the whole record: open, intent, outcome, close.
    expect(readFileSync(sidecar, "utf8").split("\n")[1]).toBe("4");
  });
});
