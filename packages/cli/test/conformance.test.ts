import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, tempDir } from "./support.js";

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

  it("says how its count relates to aegis vectors': the manifest's vectors, run or not, and the checks beyond them", () => {
    const python = spawnSync("/usr/bin/python3", [join(ROOT, "conformance/python/run_vectors.py")], { encoding: "utf8" });
    const ours = spawnSync(process.execPath, [BIN, "vectors"], { encoding: "utf8" });
    const [, total] = /^(\d+) passed, 0 failed$/m.exec(ours.stdout) ?? [];
    const manifest = JSON.parse(readFileSync(join(ROOT, "vectors/manifest.json"), "utf8")) as { vectors: unknown[] };
    expect(Number(total)).toBe(manifest.vectors.length);
    const line =
      /^# manifest\.json: (\d+) of its (\d+) vectors passed, 0 failed, (\d+) not run \(kinds [^)]+\); (\d+) more checks from external\/ and built-in cases$/m.exec(
        python.stderr,
      );
    expect(line, python.stderr).not.toBeNull();
    const [ran, of, notRun, more] = (line ?? []).slice(1).map(Number);
    expect(of).toBe(manifest.vectors.length);
    expect((ran ?? 0) + (notRun ?? 0)).toBe(of);
    const [, all] = /^(\d+) passed, 0 failed$/m.exec(python.stdout) ?? [];
    expect((ran ?? 0) + (more ?? 0)).toBe(Number(all));
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

/**
 * walk_aegis.py: aegis verify and the Python verifier on the same chain vectors, compared by
 * stdout and exit code. `.ci/run` walks every vector with the one file under Node 24; here,
 * a few, with the packages' bin, and once with a command that is not a verifier.
 */
describe("conformance/python/walk_aegis.py", () => {
  const ids = ["chains/verified_pinned", "chains/untrusted_key", "chains/untrusted_key_empty_store"];
  const dir = tempDir();
  const manifest = JSON.parse(readFileSync(join(ROOT, "vectors/manifest.json"), "utf8")) as { vectors: { id: string; input: { record: string } }[] };
  const chosen = manifest.vectors.filter((v) => ids.includes(v.id));
  for (const v of chosen) {
    mkdirSync(dirname(join(dir, v.input.record)), { recursive: true });
    copyFileSync(join(ROOT, "vectors", v.input.record), join(dir, v.input.record));
  }
  writeFileSync(join(dir, "manifest.json"), JSON.stringify({ vectors: chosen }));
  const walk = (aegis: string) => spawnSync("/usr/bin/python3", [join(ROOT, "conformance/python/walk_aegis.py"), "--aegis", aegis, dir], { encoding: "utf8" });

  it("finds aegis verify and the Python verifier in agreement on each chain vector", () => {
    expect(chosen.map((v) => v.id).sort()).toEqual([...ids].sort());
    const run = walk(`${process.execPath} ${BIN}`);
    expect(run.stdout).toBe("3 agreed, 0 differed\n");
    expect(run.status).toBe(0);
  });

  it("says where a command differs, and fails", () => {
    const run = walk("/bin/echo");
    expect(run.stdout).toMatch(/^DIFFER chains\/verified_pinned: aegis exit 0 /m);
    expect(run.stdout).toMatch(/\n0 agreed, 3 differed\n$/);
    expect(run.status).toBe(1);
  });
});
