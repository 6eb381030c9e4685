import { spawnSync } from "node:child_process";
import { lstatSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, tempDir, type Run } from "./support.js";

/**
 * ADR 0017: what the CLI's commands create that holds evidence or secrets is owner-only even
 * under `umask 000`: the demo's record, key, Envelope, checkpoint and proofs, a key in a new
 * directory, a repair's torn bytes, a pack, a report page.
 */

/** The real CLI, started by a shell whose umask is 000. */
function aegisUnder000(args: readonly string[]): Run {
  const r = spawnSync("/bin/sh", ["-c", 'umask 000; exec "$0" "$@"', process.execPath, BIN, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, AEGIS_DEBUG: "" },
    timeout: 120_000,
  });
  if (r.error !== undefined) throw new Error(`aegis ${args.join(" ")}: ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const modeOf = (path: string): string => (lstatSync(path).mode & 0o777).toString(8).padStart(3, "0");

/** Every path under `dir` (itself included) with its mode, and what an owner-only mode would be. */
function modesUnder(dir: string): { readonly found: Record<string, string>; readonly owner: Record<string, string> } {
  const found: Record<string, string> = {};
  const owner: Record<string, string> = {};
  const walk = (path: string): void => {
    const directory = lstatSync(path).isDirectory();
    found[path] = modeOf(path);
    owner[path] = directory ? "700" : "600";
    if (directory) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return { found, owner };
}

describe("files the CLI creates are owner-only under umask 000 (ADR 0017)", () => {
  it("aegis demo: its directory, record, copy, key, Envelope, checkpoint and proofs", () => {
    const dir = join(tempDir(), "new", "demo");
    const run = aegisUnder000(["demo", "--out", dir]);
    expect(run.status, run.stderr).toBe(0);
    const privateNames = ["session.aarl", "session-tampered.aarl", "signing.key", "session.checkpoint", "session.envelope", "proofs"];
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(privateNames));
    for (const name of privateNames) {
      const { found, owner } = modesUnder(join(dir, name));
      expect(found).toEqual(owner);
    }
    // The directories made for it, the one that holds the key among them.
    expect({ parent: modeOf(join(dir, "..")), dir: modeOf(dir) }).toEqual({ parent: "700", dir: "700" });
  });

  it("aegis keygen into a directory that does not exist: the directory 700, the key 600", () => {
    const key = join(tempDir(), "keys", "signing.key");
    expect(aegisUnder000(["keygen", "--out", key]).status).toBe(0);
    expect({ dir: modeOf(join(key, "..")), key: modeOf(key) }).toEqual({ dir: "700", key: "600" });
  });

  it("aegis repair: the torn bytes moved aside are as private as the record", () => {
    const dir = tempDir();
    const demo = join(dir, "demo");
    expect(aegisUnder000(["demo", "--out", demo]).status).toBe(0);
    const record = join(dir, "torn.aarl");
    writeFileSync(record, `${readFileSync(join(demo, "session.aarl"), "utf8")}{"torn":`, { mode: 0o600 });
    const run = aegisUnder000(["repair", "--json", record]);
    expect(run.status, run.stderr).toBe(0);
    const side = (JSON.parse(run.stdout) as { sidePath: string }).sidePath;
    expect(readFileSync(side, "utf8")).toBe('{"torn":');
    expect(modeOf(side)).toBe("600");
  });

  it("aegis envelope pack and aegis report: the pack and the page, 600", () => {
    const dir = tempDir();
    const demo = join(dir, "demo");
    expect(aegisUnder000(["demo", "--out", demo]).status).toBe(0);
    const record = join(demo, "session.aarl");
    const envelope = join(demo, "session.envelope");
    const pack = join(dir, "handed-over.pack");
    const packed = aegisUnder000(["envelope", "pack", "--envelope", envelope, "--out", pack, record]);
    expect(packed.status, packed.stderr).toBe(0);
    const page = join(dir, "report.html");
    const reported = aegisUnder000(["report", "--envelope", envelope, "--out", page, record]);
    expect(reported.status, reported.stderr).toBe(0);
    expect({ pack: modeOf(pack), page: modeOf(page) }).toEqual({ pack: "600", page: "600" });
  });
});
