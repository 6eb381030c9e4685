import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const ROOT = fileURLToPath(new URL(".", import.meta.url));
const INCLUDE = ["packages/*/test/**/*.test.ts", "vectors/**/*.test.ts", "test/**/*.test.ts"];

/**
 * Which test files share a process with the files run before them (`isolate: false`): each
 * file's own process, and its import of the packages' modules, is paid again for every file
 * (docs/benchmarks.md). A file keeps a process of its own when it, or a module of the tests'
 * that it imports, replaces a module or a global (`vi.mock`, `vi.spyOn`, ...) or changes
 * what the whole process shares (its umask, its listeners); or when it measures memory or
 * drives a browser: Linux carries a parent's peak RSS into its child's after exec, and a
 * process that has run other files has grown.
 */
const REPLACES = /\bvi\.(?:mock|doMock|unmock|spyOn|stubEnv|stubGlobal|useFakeTimers)\b|process\.(?:umask|on|once)\(/;
const MEASURES = /aegisBounded|peak|maxRSS|resourceUsage|memoryUsage|playwright|chromium/i;

/** Every test file INCLUDE names, relative to the root. */
function testFiles(): string[] {
  const dirs = [...readdirSync(join(ROOT, "packages")).map((p) => join("packages", p, "test")), "vectors", "test"];
  return dirs.flatMap((dir) => {
    let names: string[];
    try {
      names = readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" });
    } catch {
      return [];
    }
    return names.filter((name) => name.endsWith(".test.ts") && !name.split("/").includes("node_modules")).map((name) => join(dir, name));
  });
}

/** The file's text and that of the tests' own modules it imports, however deep (not the packages' sources). */
function textWithHelpers(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return "";
  seen.add(file);
  const text = readFileSync(join(ROOT, file), "utf8");
  const helpers = [...text.matchAll(/from "(\.{1,2}\/[^"]+)"/g)]
    .map((m) => join(dirname(file), (m[1] ?? "").replace(/\.js$/, ".ts")))
    .filter((helper) => !helper.includes("/src/") && existsSync(join(ROOT, helper)));
  return [text, ...helpers.map((helper) => textWithHelpers(helper, seen))].join("\n");
}

const files = testFiles();
// The CLI's test helpers offer a bounded run (aegisBounded) to every file: a file's own text says whether it uses one.
const ownProcess = files.filter((file) => REPLACES.test(textWithHelpers(file)) || MEASURES.test(readFileSync(join(ROOT, file), "utf8")));
const sharing = files.filter((file) => !ownProcess.includes(file));

const src = (file: string): string => fileURLToPath(new URL(`./packages/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests exercise the sources; the CLI tests that spawn a process use the built bin.
    // Exact-match patterns, so "@aegis/policy/testing" is not read as a path under "@aegis/policy".
    alias: [
      { find: /^@aegis\/format$/, replacement: src("format/src/index.ts") },
      { find: /^@aegis\/format\/internal$/, replacement: src("format/src/internal.ts") },
      { find: /^@aegis\/format\/browser$/, replacement: src("format/src/browser.ts") },
      { find: /^@aegis\/envelope$/, replacement: src("envelope/src/index.ts") },
      { find: /^@aegis\/envelope\/internal$/, replacement: src("envelope/src/internal.ts") },
      { find: /^@aegis\/policy$/, replacement: src("policy/src/index.ts") },
      { find: /^@aegis\/proof$/, replacement: src("proof/src/index.ts") },
      { find: /^@aegis\/policy\/testing$/, replacement: src("policy/src/testing.ts") },
      { find: /^@aegis\/policy\/internal$/, replacement: src("policy/src/internal.ts") },
      { find: /^@aegis\/mcp$/, replacement: src("mcp/src/index.ts") },
      { find: /^@aegis\/vectors\/oracle$/, replacement: fileURLToPath(new URL("./vectors/src/oracle.ts", import.meta.url)) },
      { find: /^@aegis\/cli\/browser$/, replacement: src("cli/src/browser.ts") },
      { find: /^@aegis\/mcp\/internal$/, replacement: src("mcp/src/internal.ts") },
    ],
  },
  test: {
    include: INCLUDE,
    globalSetup: ["test/support/scratch.ts", "test/support/built.ts"],
    // Three at a time on two cores: most files wait on child processes, fsync, pipes or a
    // browser. With two, the suite kept 1.2 of the 2 cores busy (13.5 min of wall time for
    // 16 min of CPU, 2026-12-06); with three, 11.5 min, the cores busier.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      // A project's include and exclude add to the root's: each leaves out the other's files.
      { extends: true, test: { name: "own process", exclude: sharing } },
      { extends: true, test: { name: "shared", exclude: ownProcess, isolate: false } },
    ],
  },
});
