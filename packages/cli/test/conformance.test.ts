import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support.js";

/**
 * The second verifier (conformance/python, written from SPEC.md alone) on every vector, in
 * pure Python so that the suite needs nothing beyond Debian's /usr/bin/python3. `.ci/run`
 * runs it again with libsodium as its Ed25519 primitive.
 */
describe("conformance/python", () => {
  it("passes every chain, canonical and Ed25519 vector", () => {
    const run = spawnSync("/usr/bin/python3", [join(ROOT, "conformance/python/run_vectors.py"), "--pure-python"], { encoding: "utf8" });
    expect(run.error).toBeUndefined();
    expect(run.stdout).toMatch(/^[1-9]\d* passed, 0 failed$/m);
    expect(run.status).toBe(0);
  });

  it("passes its own tests of readings no vector pins", () => {
    const run = spawnSync("/usr/bin/python3", [join(ROOT, "conformance/python/test_walk.py")], { encoding: "utf8" });
    // Without PyNaCl (a fresh machine before .ci/run) the one test comparing libsodium's
    // answers with the pure path is skipped; every other test signs in pure Python.
    expect(run.stderr).toMatch(/\nOK(?: \(skipped=1\))?\n?$/);
    expect(run.stderr).toMatch(/^Ran [1-9]\d* tests/m);
    expect(run.status).toBe(0);
  });
});
