// `npm run mutation` (ADR 0026): StrykerJS over the verifier core, every mutator on.
// The mutants that no test can kill, because they change nothing a caller can observe,
// are listed with the reason for each in stryker-equivalents.md beside this file; a
// `// Stryker disable` comment in the core names one of them and nothing else.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  coverageAnalysis: "perTest",
  // The verifier's core (issue 51; test/house/verifier-layers.test.ts names it) and the
  // wire and crypto code every verdict rests on.
  mutate: [
    "packages/format/src/verify/deferred-checks.ts",
    "packages/format/src/verify/exit-code.ts",
    "packages/format/src/verify/piece-answer.ts",
    "packages/format/src/verify/piece-cutter.ts",
    "packages/format/src/verify/piece-rows.ts",
    "packages/format/src/verify/row-verifier.ts",
    "packages/format/src/verify/row-work.ts",
    "packages/format/src/verify/signature-batch.ts",
    "packages/format/src/verify/signature-checker.ts",
    "packages/format/src/verify/split-tuning.ts",
    "packages/format/src/verify/split-walk.ts",
    "packages/format/src/verify/unfinished-calls.ts",
    "packages/format/src/verify/verdict.ts",
    "packages/format/src/verify/verify-options.ts",
    "packages/format/src/verify/walk.ts",
    "packages/format/src/crypto/ed25519.ts",
    "packages/format/src/crypto/signing.ts",
    "packages/format/src/wire/canonical.ts",
    "packages/format/src/wire/json.ts",
    "packages/format/src/wire/json-value.ts",
    "packages/format/src/wire/line-read.ts",
    "packages/format/src/wire/line-members.ts",
    "packages/format/src/wire/line-time.ts",
  ],
  // Not read by the format package's tests (the tsconfig references must stay whole).
  ignorePatterns: ["/docs", "/api", "/conformance", "/aegis-demo", "/screenshots", "/.drafts"],
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, logTests: false, allowEmojis: false },
  incrementalFile: "reports/mutation/stryker-incremental.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  concurrency: 2,
  timeoutMS: 5000,
  thresholds: { high: 90, low: 90, break: null },
};
