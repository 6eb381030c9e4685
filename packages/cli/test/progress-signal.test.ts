import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN, largeRecord, tempDir } from "./support.js";

const CTRL_C = fileURLToPath(new URL("./support/ctrl-c.py", import.meta.url));
const CLEAR_LINE = "\r\u001b[2K";

/** Issue 50.9: the progress line of a long verify, on a terminal, when the user presses Ctrl-C. */
describe("the progress line on a terminal", () => {
  it("is cleared on Ctrl-C before verify dies of SIGINT", async () => {
    // Over 16 MiB, the size from which progress is shown; one thread, so it runs for seconds.
    const record = join(tempDir(), "large.aarl");
    await largeRecord(record, 34_000);
    const run = spawnSync("/usr/bin/python3", [CTRL_C, "verifying:", process.execPath, BIN, "verify", "--threads", "1", record], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const ended = JSON.parse(run.stdout) as { screen: string; pressed: boolean; signal?: number; code?: number };
    expect(ended.pressed, ended.screen).toBe(true);
    // Killed by the signal, as without the progress line: the shell says 130.
    expect(ended).toMatchObject({ signal: 2 });
    const last = ended.screen.lastIndexOf("verifying:");
    expect(ended.screen.slice(last)).toMatch(/^verifying: \d+ MiB of \d+ MiB \(\d+%\)/);
    expect(ended.screen.endsWith(CLEAR_LINE), JSON.stringify(ended.screen)).toBe(true);
  }, 60_000);
});
