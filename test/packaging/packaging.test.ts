import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile } from "./compile.js";
import { readmeExamples } from "./examples.js";
import { WORKSPACES, packArgs } from "./commands.js";
import { run, shown, type Ran } from "./run.js";

/**
 * The packages as a stranger gets them: `npm pack` every published package, install the
 * tarballs into an empty project (dependencies from the npm cache, else the registry), and
 * use them there: the CLI, installed locally and globally, and every README's TypeScript
 * compiled against the public API under each module resolution a project may use, then run.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// The tests below start npm or the CLI as a user would, and compile with TypeScript: on a
// machine busy with other work, the three compiles alone once took over the default minute.
const MINUTES = 60_000;

interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

/** npm as a user runs it: none of the `npm test` run's own npm settings leak in. */
const NPM_ENV: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.toLowerCase().startsWith("npm_") || ["npm_config_cache", "npm_config_registry", "npm_config_userconfig"].includes(k.toLowerCase()),
  ),
);

function npm(args: readonly string[], cwd: string): Promise<Ran> {
  return run("npm", args, { cwd, env: NPM_ENV });
}

function versionOf(pkg: string): string {
  return (JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
}

/** The file paths an exports map names: its string leaves, whatever the nesting of conditions. */
function leaves(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(leaves);
}

let work = "";
let packed: Packed[] = [];
let consumer = "";

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "aegis-packaging-"));
  const packs = join(work, "packs");
  mkdirSync(packs);
  const pack = await npm(packArgs(packs), ROOT);
  expect(pack.code, shown(pack)).toBe(0);
  packed = JSON.parse(pack.stdout) as Packed[];

  for (const p of packed) {
    const into = join(work, "unpacked", p.name);
    mkdirSync(into, { recursive: true });
    const untar = await run("tar", ["-xzf", join(packs, p.filename), "-C", into, "--strip-components=1"], { cwd: work });
    expect(untar.code, shown(untar)).toBe(0);
  }

  // The MCP SDK is a peer of @aegis/mcp, and the README's MCP example starts
  // server-filesystem: a user installs both, at the versions this repository tests with.
  consumer = join(work, "consumer");
  mkdirSync(consumer);
  const dependencies: Record<string, string> = {
    "@modelcontextprotocol/sdk": versionOf("@modelcontextprotocol/sdk"),
    "@modelcontextprotocol/server-filesystem": versionOf("@modelcontextprotocol/server-filesystem"),
  };
  for (const p of packed) dependencies[p.name] = `file:${join(packs, p.filename)}`;
  writeFileSync(join(consumer, "package.json"), `${JSON.stringify({ name: "aegis-consumer", private: true, type: "module", dependencies }, null, 2)}\n`);
  const install = await npm(["install", "--prefer-offline", "--no-audit", "--no-fund"], consumer);
  expect(install.code, shown(install)).toBe(0);
}, 10 * MINUTES);

// 170 MB of tarballs and installs a run: 36 runs had left 5.5 GB in this machine's /tmp.
afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true });
});

describe("each published tarball", () => {
  it("ships the licenses, a README, its entry points, and no build state, test or orphaned map", () => {
    expect(packed.map((p) => p.name).sort()).toEqual([
      "@aegis/cli",
      "@aegis/envelope",
      "@aegis/format",
      "@aegis/mcp",
      "@aegis/policy",
      "@aegis/proof",
      "@aegis/vectors",
    ]);
    for (const p of packed) {
      const files = new Set(p.files.map((f) => f.path));
      const root = join(work, "unpacked", p.name);
      for (const required of ["package.json", "README.md", "LICENSE-APACHE", "LICENSE-MIT"])
        expect(files.has(required), `${p.name} ships ${required}`).toBe(true);
      expect(readFileSync(join(root, "LICENSE-APACHE"), "utf8")).toContain("Apache License");
      expect(readFileSync(join(root, "LICENSE-MIT"), "utf8")).toContain("MIT License");
      const stray = [...files].filter((f) => /tsbuildinfo|(^|\/)test\/|\.test\.[cm]?[jt]s$/.test(f));
      expect(stray, `${p.name} ships no build state or tests`).toEqual([]);
      for (const map of [...files].filter((f) => f.endsWith(".map"))) {
        const { sources } = JSON.parse(readFileSync(join(root, map), "utf8")) as { sources: string[] };
        for (const source of sources) {
          const shipped = relative(root, join(root, dirname(map), source));
          expect(files.has(shipped), `${p.name}: ${map} points at ${shipped}`).toBe(true);
        }
      }
      const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        private?: boolean;
        exports?: Record<string, unknown>;
        types?: string;
        bin?: Record<string, string>;
      };
      expect(manifest.private, `${p.name} is publishable`).toBeUndefined();
      const targets = [manifest.types, ...Object.values(manifest.bin ?? {}), ...leaves(manifest.exports)];
      for (const target of targets) if (target !== undefined) expect(existsSync(join(root, target)), `${p.name}: ${target} exists`).toBe(true);
    }
  });

  it("passes npm publish --dry-run", { timeout: 5 * MINUTES }, async () => {
    const publish = await npm(["publish", "--dry-run", ...WORKSPACES], ROOT);
    expect(publish.code, shown(publish)).toBe(0);
    for (const p of packed) expect(publish.stdout).toContain(`+ ${p.name}@${p.version}`);
  });

  it("brings consumers the prebuilt cbor-extract the repository pins, not one that must compile", () => {
    const version = (JSON.parse(readFileSync(join(consumer, "node_modules/cbor-extract/package.json"), "utf8")) as { version: string }).version;
    expect(version).toBe("2.2.2");
    expect(existsSync(join(consumer, "node_modules/cbor-x/node_modules/cbor-extract"))).toBe(false);
  });
});

describe("the installed aegis command", () => {
  const aegis = (args: readonly string[], cwd = consumer): Promise<Ran> => run(join(consumer, "node_modules/.bin/aegis"), args, { cwd });

  it("prints its version, runs the demo, passes every bundled vector and verifies the golden Session", { timeout: 5 * MINUTES }, async () => {
    const cli = packed.find((p) => p.name === "@aegis/cli");
    const version = await aegis(["--version"]);
    expect(version.stdout.trim()).toBe(cli?.version);

    const demo = await aegis(["demo", "--out", join(work, "demo")]);
    expect(demo.code, shown(demo)).toBe(0);
    expect(demo.stdout).toContain("Verified (pinned to");

    const vectors = await aegis(["vectors"]);
    expect(vectors.code, shown(vectors)).toBe(0);
    expect(vectors.stdout).toMatch(/^[1-9]\d* passed, 0 failed$/m);

    const golden = join(consumer, "node_modules/@aegis/vectors/external/rust-aegis/golden-session.aarl");
    const open = JSON.parse(readFileSync(golden, "utf8").split("\n")[0] ?? "") as { public_key: string };
    const verify = await aegis(["verify", "--key", open.public_key, golden]);
    expect(verify.code, shown(verify)).toBe(0);
    expect(verify.stdout).toMatch(/^Verified \(pinned to /);
  });

  it("starts as the checkout's does: --version loads the bin, launch.js and version.js, and no other module", async () => {
    const log = join(work, "modules.log");
    const bin = join(consumer, "node_modules/.bin/aegis");
    const ran = await run(process.execPath, ["--import", join(ROOT, "packages/cli/test/support/module-log.mjs"), bin, "--version"], {
      cwd: consumer,
      env: { ...process.env, AEGIS_MODULE_LOG: log },
    });
    expect(ran.code, shown(ran)).toBe(0);
    const loaded = [...new Set(readFileSync(log, "utf8").split("\n").filter(Boolean))].map((url) => relative(consumer, fileURLToPath(url)));
    expect(loaded.sort()).toEqual([
      "node_modules/@aegis/cli/bin/aegis.js",
      "node_modules/@aegis/cli/dist/launch.js",
      "node_modules/@aegis/cli/dist/version.js",
    ]);
  });

  it("works installed globally and through npx", { timeout: 5 * MINUTES }, async () => {
    const prefix = join(work, "global");
    const tarballs = packed.map((p) => join(work, "packs", p.filename));
    const install = await npm(["install", "--global", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", ...tarballs], work);
    expect(install.code, shown(install)).toBe(0);
    const global = await run(join(prefix, "bin/aegis"), ["verify", "--help"], { cwd: work });
    expect(global.code, shown(global)).toBe(0);
    expect(global.stdout).toContain("aegis verify <PATH>");

    const npx = await run("npx", ["--no-install", "aegis", "--version"], { cwd: consumer, env: NPM_ENV });
    expect(npx.code, shown(npx)).toBe(0);
    expect(npx.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe("the READMEs' TypeScript, against the installed packages", () => {
  const examples = readmeExamples(ROOT);

  function tsconfig(name: string, compilerOptions: Record<string, unknown>, files: readonly string[]): string {
    const path = join(consumer, `tsconfig.${name}.json`);
    const base = {
      strict: true,
      target: "ES2022",
      lib: ["ES2023", "DOM"],
      types: ["node"],
      typeRoots: [join(ROOT, "node_modules/@types")],
      skipLibCheck: false,
    };
    writeFileSync(path, JSON.stringify({ compilerOptions: { ...base, ...compilerOptions }, files }, null, 2));
    return path;
  }

  it("finds the examples", () => {
    expect(examples.map((e) => e.source)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^docs\/library\.md:/), expect.stringMatching(/^packages\/policy\/README\.md:/)]),
    );
  });

  it("compiles every example under nodenext and bundler resolution, and the public types under node10", { timeout: 5 * MINUTES }, async () => {
    const dir = join(consumer, "examples");
    mkdirSync(dir, { recursive: true });
    const files = examples.map((e) => {
      writeFileSync(join(dir, `${e.name}.ts`), `${e.code}\n`);
      return `examples/${e.name}.ts`;
    });
    // Every public entry point, type-only, as an older project (node10 resolution) would import it.
    writeFileSync(
      join(dir, "node10.ts"),
      [
        'import type { RecordWriter, Verification } from "@aegis/format";',
        'import type { EnvelopeStore } from "@aegis/envelope";',
        'import type { Decision, outcomeOf } from "@aegis/policy";',
        'import type { assertRecheckUnchanged } from "@aegis/policy/testing";',
        'import type { WrapOptions } from "@aegis/mcp";',
        "export type Seen = [RecordWriter, Verification, EnvelopeStore, Decision, typeof outcomeOf, typeof assertRecheckUnchanged, WrapOptions];",
        "",
      ].join("\n"),
    );
    const ours = (file: string): boolean => file.startsWith(join(consumer, "node_modules/@aegis/")) || file.startsWith(dir);
    const builds: [string, Record<string, unknown>, readonly string[], (file: string) => boolean][] = [
      ["nodenext", { module: "nodenext", moduleResolution: "nodenext", rootDir: ".", outDir: "out" }, files, ours],
      ["bundler", { module: "preserve", moduleResolution: "bundler", noEmit: true }, files, ours],
      // Only the entry points' resolution is in question here; the two builds above check the declarations.
      ["node10", { module: "esnext", moduleResolution: "node10", noEmit: true, skipLibCheck: true }, ["examples/node10.ts"], (file) => !file.endsWith(".d.ts")],
    ];
    for (const [name, options, inputs, checked] of builds) expect(compile(tsconfig(name, options, inputs), checked), name).toEqual([]);
    expect(readdirSync(join(consumer, "out", "examples")).filter((f) => f.endsWith(".js"))).toHaveLength(examples.length);
  });

  it("runs every example to a clean exit, beside a key made by aegis keygen", { timeout: 5 * MINUTES }, async () => {
    for (const example of examples) {
      // Inside the project, as a user runs them: npx finds the installed server there.
      const cwd = join(consumer, "run", example.name);
      mkdirSync(cwd, { recursive: true });
      const keygen = await run(join(consumer, "node_modules/.bin/aegis"), ["keygen", "--out", "signing.key"], { cwd });
      expect(keygen.code, shown(keygen)).toBe(0);
      const ran = await run(process.execPath, [join(consumer, "out", "examples", `${example.name}.js`)], { cwd });
      expect(ran.code, `${example.source}\n${shown(ran)}`).toBe(0);
      expect(ran.stderr, example.source).toBe("");
    }
  });
});
