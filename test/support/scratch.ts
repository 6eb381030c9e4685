import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SCRATCH = "AEGIS_TEST_SCRATCH";

/**
 * Vitest's global setup: every test file, and every process a test starts, makes its
 * temporary files under one directory of this run's, removed when the run ends. Tests clean
 * up after themselves where they can, but a file that fails, times out or kills a child
 * mid-write cannot; before this, a day of runs had left 44 GB in this machine's /tmp.
 */
export default function setup(): () => void {
  // Each project of the suite (vitest.config.ts) runs the global setup again, in this one
  // process: the first made the directory, the others use it. A directory in a directory
  // would make paths too long for a Unix socket's address (Chromium's, wrap's).
  if (process.env[SCRATCH] !== undefined) return () => undefined;
  const scratch = mkdtempSync(join(tmpdir(), "aegis-test-run-"));
  process.env[SCRATCH] = scratch;
  // As /tmp is: the tests that act as another local user reach what is theirs in it.
  chmodSync(scratch, 0o1777);
  process.env["TMPDIR"] = scratch;
  return () => {
    rmSync(scratch, { recursive: true, force: true });
    Reflect.deleteProperty(process.env, SCRATCH);
  };
}
