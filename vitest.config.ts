import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string): string =>
  fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests exercise the sources; the CLI tests that spawn a process use the built bin.
    alias: {
      "@aegis/format": src("format"),
      "@aegis/envelope": src("envelope"),
      "@aegis/policy": src("policy"),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "vectors/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
