import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { BIN, aegis, largeRecord, tempDir, vector } from "./support.js";

/**
 * `aegis verify` given several records, or directories with --recursive: each file's answer
 * is exactly what verify says of it alone, in the order given, then a summary; the exit code
 * is the worst answer. And the parallel verifier prints what the sequential one prints.
 */
const CHAINS = ["verified_unpinned", "chain_broken", "unanchored_tail", "bad_signature_altered", "verified_two_sessions"];

describe("aegis verify, several records", () => {
  const dir = tempDir();
  const files = CHAINS.map((name, i) => join(dir, i % 2 === 0 ? "" : "nested", `${name}.aarl`));
  beforeAll(() => {
    mkdirSync(join(dir, "nested"));
    CHAINS.forEach((name, i) => copyFileSync(vector(`chains/${name}.aarl`), files[i] ?? ""));
    writeFileSync(join(dir, "nested", "notes.txt"), "not a record: skipped by --recursive\n");
  });

  it("prints each record's answer as verify alone prints it, in the order given, then a summary; the exit code is the worst", () => {
    const missing = join(dir, "missing.aarl");
    const run = aegis(["verify", ...files, missing]);
    const blocks = files.map((f) => `==> ${f} <==\n${aegis(["verify", f]).stdout}`);
    blocks.push(`==> ${missing} <==\nUnreadable: No such file or directory (os error 2)\n`);
    expect(run.stdout).toBe(`${blocks.join("\n")}\nsummary: 6 records: 2 verified, 2 tampered, 1 indeterminate, 1 unreadable\n`);
    expect(run.stderr).toMatch(/^error: 1 of 6 records could not be read\nhelp: /);
    expect(run.status).toBe(1);
  });

  it("exit codes: Tampered outranks Unreadable, which outranks Indeterminate", () => {
    const [verified, broken, tail] = [files[0] ?? "", files[1] ?? "", files[2] ?? ""];
    expect(aegis(["verify", verified, verified]).status).toBe(0);
    expect(aegis(["verify", verified, tail]).status).toBe(3);
    expect(aegis(["verify", tail, join(dir, "missing.aarl")]).status).toBe(2);
    expect(aegis(["verify", join(dir, "missing.aarl"), broken]).status).toBe(1);
  });

  it("--recursive verifies every .aarl file under a directory, sorted by path", () => {
    const run = aegis(["verify", "--recursive", dir]);
    const sorted = [...files].sort();
    expect([...run.stdout.matchAll(/^==> (.*) <==$/gm)].map((m) => m[1])).toEqual(sorted);
    expect(run.stdout).toMatch(/\nsummary: 5 records: 2 verified, 2 tampered, 1 indeterminate, 0 unreadable\n$/);
    expect(run.status).toBe(1);
  });

  it("--json: one document per line, each verify --json's for that record plus its path", () => {
    const run = aegis(["verify", "--json", "--key", "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c", ...files, join(dir, "nested")]);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(files.length + 1);
    files.forEach((f, i) => {
      const alone = JSON.parse(aegis(["verify", "--json", "--key", "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c", f]).stdout) as object;
      expect(JSON.parse(lines[i] ?? "")).toEqual({ path: f, ...alone });
    });
    expect(JSON.parse(lines[files.length] ?? "")).toEqual({
      path: join(dir, "nested"),
      schema: "aegis.verify/1",
      verdict: "unreadable",
      error: "Is a directory (os error 21)",
      exit_code: 2,
    });
    expect(run.status).toBe(1);
  });

  it("--threads 0 (one after another, on one thread) prints the same", () => {
    expect(aegis(["verify", "--threads", "0", "--recursive", dir]).stdout).toBe(aegis(["verify", "--recursive", dir]).stdout);
  });

  it("refuses what belongs to one record: --checkpoint, --envelope, standard input", () => {
    for (const [flags, words] of [
      [["--checkpoint", "x.checkpoint"], /--checkpoint holds one record/],
      [["--envelope", dir], /--envelope checks one record's Envelope/],
      [["-"], /- \(standard input\) is one record/],
    ] as const) {
      const run = aegis(["verify", ...flags, ...files.slice(0, 2)]);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(words);
      expect(run.stderr).toMatch(/^help: /m);
    }
    expect(aegis(["verify", "--threads", "two", files[0] ?? ""]).stderr).toMatch(/--threads wants a whole number/);
  });
});

describe("the parallel verifier prints what the sequential one prints", () => {
  let rows: string[];
  beforeAll(async () => {
    // Thousands of signatures: enough that the checks go to the threads.
    const path = join(tempDir(), "large.aarl");
    await largeRecord(path, 4000);
    rows = readFileSync(path, "utf8").split("\n");
  });

  it("a record big enough to start the threads but done before they are: the process still ends", async () => {
    // 150 signatures: past the first 64, so the threads start, and checked before they run.
    const path = join(tempDir(), "small.aarl");
    await largeRecord(path, 300);
    const run = spawnSync(process.execPath, [BIN, "verify", path], { encoding: "utf8", timeout: 30_000 });
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
  });

  it("on a large record broken at random places: stdout and exit code", () => {
    const dir = tempDir();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3999 }), fc.nat({ max: 120 }), fc.integer({ min: 1, max: 25 }), (row, at, delta) => {
        const broken = [...rows];
        const text = broken[row] ?? "";
        const i = at % text.length;
        broken[row] = text.slice(0, i) + String.fromCharCode(((text.charCodeAt(i) - 32 + delta) % 95) + 32) + text.slice(i + 1);
        const path = join(dir, `broken-${row}-${at}.aarl`);
        writeFileSync(path, broken.join("\n"));
        const sequential = aegis(["verify", "--threads", "0", path]);
        const parallel = aegis(["verify", path]);
        expect(parallel.stdout).toBe(sequential.stdout);
        expect(parallel.status).toBe(sequential.status);
        expect(parallel.status).not.toBe(0);
      }),
      { numRuns: 6 },
    );
    // Twelve runs of the CLI on a large record: minutes on a machine busy with other work.
  }, 300_000);
});
