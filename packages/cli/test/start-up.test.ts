import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { VERSION } from "../src/version.js";
import { BIN, GOLDEN, GOLDEN_PUBLIC_KEY, ROOT, UNBUNDLED, aegis, tempDir } from "./support.js";

/**
 * What makes `aegis` start fast (ADR 0023), checked by what it loads, not by a time: a
 * command's code is loaded only when that command runs. The bin answers `--version` itself
 * and runs the one file for anything else (ADR 0045); the one file's chunks follow the
 * packages' module graph, which is read here through the packages' modules (UNBUNDLED), a
 * file each. bench/ measures the times (`npm run bench:start-up`).
 */

const MODULE_LOG = join(ROOT, "packages/cli/test/support/module-log.mjs");
const CLI_DIST = join(ROOT, "packages/cli/dist");

/** `aegis --version` loads the bin, launch.js and version.js, and nothing else. */
const VERSION_MODULE_BOUND = 3;
/**
 * `aegis verify` of a record, read from the packages' modules (the graph the one file's
 * chunks follow), loads the verifier, the exit-code rules beside the vectors, clipanion, and
 * its own command: 116 files since `@aegis/format/durable` and the Envelope's layout
 * constants joined them (ADR 0043), two modules of exports only. The Envelope's store and
 * cbor-x, and the checkpoints' code, some 50 more, load only with --envelope or --checkpoint
 * (they loaded at every start until 161 files did). Not the relay, the policy engine or its
 * YAML parser (over a hundred more), nor any other command: each is asserted absent below.
 */
const VERIFY_MODULE_BOUND = 116;

/** The files of the modules `node <script> ...args` loads, as paths. */
function modulesLoaded(script: string, args: readonly string[]): { readonly files: string[]; readonly status: number | null; readonly stdout: string } {
  const log = join(tempDir(), "modules.log");
  const run = spawnSync(process.execPath, ["--import", MODULE_LOG, script, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, AEGIS_MODULE_LOG: log, AEGIS_DEBUG: "" },
  });
  const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
  const files = [...new Set(lines.map((url) => (url.startsWith("file:") ? fileURLToPath(url) : url)))];
  return { files, status: run.status, stdout: run.stdout };
}

const commandsIn = (files: readonly string[]): string[] =>
  files.filter((f) => f.startsWith(join(CLI_DIST, "commands"))).map((f) => f.slice(join(CLI_DIST, "commands").length + 1));

describe("aegis start-up", () => {
  it(`--version loads no command's code and at most ${VERSION_MODULE_BOUND} modules`, () => {
    const run = modulesLoaded(BIN, ["--version"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${VERSION}\n`);
    expect(run.files.sort()).toEqual([BIN, join(CLI_DIST, "launch.js"), join(CLI_DIST, "version.js")].sort());
    expect(run.files.length).toBeLessThanOrEqual(VERSION_MODULE_BOUND);
  });

  it("any other command runs from the one file: the bin loads no other module file", () => {
    const run = modulesLoaded(BIN, ["verify", "--key", GOLDEN_PUBLIC_KEY, GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Verified \(pinned to /);
    expect(run.files.sort()).toEqual([BIN, join(CLI_DIST, "aegis.mjs"), join(CLI_DIST, "launch.js"), join(CLI_DIST, "version.js")].sort());
  });

  it(`verify loads its own command alone, not the relay, the policy engine, the checkpoints or the Envelope store, in at most ${VERIFY_MODULE_BOUND} modules`, () => {
    const run = modulesLoaded(UNBUNDLED, ["verify", "--key", GOLDEN_PUBLIC_KEY, GOLDEN]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Verified \(pinned to /);
    expect(commandsIn(run.files)).toEqual(["verify.js"]);
    const packages = (name: string): string[] => run.files.filter((f) => f.includes(`/packages/${name}/`) || f.includes(`/node_modules/${name}/`));
    expect(packages("mcp")).toEqual([]);
    expect(packages("policy")).toEqual([]);
    expect(packages("yaml")).toEqual([]);
    expect(packages("proof")).toEqual([]);
    expect(packages("cbor-x")).toEqual([]);
    expect(run.files.length).toBeLessThanOrEqual(VERIFY_MODULE_BOUND);
  });

  it("a command's help loads that command, and aegis --help every command", () => {
    expect(commandsIn(modulesLoaded(UNBUNDLED, ["wrap", "--help"]).files)).toEqual(["wrap.js"]);
    expect(commandsIn(modulesLoaded(UNBUNDLED, ["envelope", "get", "--help"]).files)).toEqual(["envelope/get.js"]);
    const all = commandsIn(modulesLoaded(UNBUNDLED, ["--help"]).files);
    expect(all).toEqual(expect.arrayContaining(["verify.js", "wrap.js", "recheck.js", "envelope/get.js", "proof-verify.js"]));
  });

  it("a mistyped command loads no command's code and lists the commands", () => {
    const run = modulesLoaded(UNBUNDLED, ["verfy", GOLDEN]);
    expect(run.status).toBe(1);
    expect(commandsIn(run.files)).toEqual([]);
  });

  it("says the version its package.json says", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "packages/cli/package.json"), "utf8")) as { version: string };
    expect(VERSION).toBe(manifest.version);
    expect(aegis(["--version"]).stdout).toBe(`${manifest.version}\n`);
    expect(aegis(["-v"]).stdout).toBe(`${manifest.version}\n`);
  });
});

describe("aegis help", () => {
  it("is aegis --help, and aegis help <command> is that command's --help", () => {
    const help = aegis(["help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toBe(aegis(["--help"]).stdout);
    expect(aegis(["help", "verify"]).stdout).toBe(aegis(["verify", "--help"]).stdout);
    expect(aegis(["help", "envelope"]).stdout).toBe(aegis(["envelope", "--help"]).stdout);
    expect(aegis(["help", "proof", "verify"]).stdout).toBe(aegis(["proof", "verify", "--help"]).stdout);
  });

  it("names each option's value in the list of commands as the command's own help does", () => {
    const listed = aegis(["--help"])
      .stdout.split("\n")
      .filter((l) => l.startsWith("  aegis "));
    expect(listed.length).toBeGreaterThan(15);
    const valuesOf = (text: string): Map<string, string> => new Map([...text.matchAll(/(--[a-z-]+) (<[A-Z|]+>)/g)].map((m) => [m[1] ?? "", m[2] ?? ""]));
    let compared = 0;
    for (const line of listed) {
      const path = (/^ {2}aegis ((?:[a-z]+ ?)+?)(?= [-[<]|$)/.exec(line)?.[1] ?? "").trim();
      const own = valuesOf(
        aegis([...path.split(" "), "--help"])
          .stdout.split("\nOptions\n")[1]
          ?.split("\nDetails\n")[0] ?? "",
      );
      for (const [flag, value] of valuesOf(line)) {
        expect(`aegis ${path} ${flag} ${own.get(flag) ?? "(absent)"}`).toBe(`aegis ${path} ${flag} ${value}`);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(30);
    // One aegis process per command, one after another: bounded for a busy machine, not timed.
  }, 300_000);

  it("of a command that does not exist is an unknown command, as it would be without help", () => {
    const run = aegis(["help", "verfy"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^error: unknown command: verfy; did you mean verify\?\nhelp: commands: verify, /);
  });
});
