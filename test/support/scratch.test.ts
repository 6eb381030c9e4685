import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("the run's scratch directory (scratch.ts)", () => {
  it("holds every temporary directory a test or its child makes, and is open to other users as /tmp is", () => {
    const scratch = tmpdir();
    expect(basename(scratch)).toMatch(/^aegis-test-run-/);
    // One directory for the run, though each of the suite's projects runs the global setup.
    expect(basename(dirname(scratch))).not.toMatch(/^aegis-test-run-/);
    expect(statSync(scratch).mode & 0o7777).toBe(0o1777);
    expect(dirname(mkdtempSync(join(tmpdir(), "aegis-scratch-")))).toBe(scratch);
    expect(execFileSync(process.execPath, ["-p", "require('node:os').tmpdir()"], { encoding: "utf8" }).trim()).toBe(scratch);
  });
});
