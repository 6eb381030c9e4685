import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

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
    include: ["packages/*/test/**/*.test.ts", "vectors/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/scratch.ts", "test/support/built.ts"],
    // Three at a time on two cores: most files wait on child processes, fsync, pipes or a
    // browser. With two, the suite kept 1.2 of the 2 cores busy (13.5 min of wall time for
    // 16 min of CPU, 2026-12-06); with three, 11.5 min, the cores busier.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
