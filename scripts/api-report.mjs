#!/usr/bin/env node
// The public surface of every published entry point, as API Extractor reports it (api/*.api.md).
// `npm run api` fails when the built declarations differ from the checked-in report, or when an
// export has no doc comment; `npm run api -- --update` rewrites the reports after a deliberate
// change, which then shows up in review as a diff of api/.
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const root = fileURLToPath(new URL("..", import.meta.url));
const update = process.argv.includes("--update");

/**
 * [report name, package directory, declaration file of the entry point]. An `-internal` entry is
 * for aegis's own packages: reported, so a change still shows in review, but its exports need
 * not be documented and may name types the public entry exports. `format-browser` is one too, and
 * so are `@aegis/vectors`' two code entries: its public face is its data.
 */
const ENTRY_POINTS = [
  ["format", "packages/format", "dist/index.d.ts"],
  ["format-internal", "packages/format", "dist/internal.d.ts"],
  ["format-browser", "packages/format", "dist/browser.d.ts"],
  ["envelope", "packages/envelope", "dist/index.d.ts"],
  ["envelope-internal", "packages/envelope", "dist/internal.d.ts"],
  ["policy", "packages/policy", "dist/index.d.ts"],
  ["policy-testing", "packages/policy", "dist/testing.d.ts"],
  ["proof", "packages/proof", "dist/index.d.ts"],
  ["mcp", "packages/mcp", "dist/index.d.ts"],
  ["mcp-internal", "packages/mcp", "dist/internal.d.ts"],
  ["mcp-v2", "packages/mcp", "dist/v2.d.ts"],
  ["cli", "packages/cli", "dist/index.d.ts"],
  ["vectors-oracle", "vectors", "dist/oracle.d.ts"],
  ["vectors-exit-code", "vectors", "dist/exit-code.d.ts"],
];

let failed = 0;
for (const [name, dir, entry] of ENTRY_POINTS) {
  // The browser entry is what the report page bundles: internal parts of the verifier, as
  // `@aegis/format/internal` is for Node.
  const internal = name.endsWith("-internal") || name === "format-browser" || name.startsWith("vectors-");
  // A second entry of a package may name types its main entry exports (`@aegis/policy/testing`
  // takes a PolicySet from `@aegis/policy`).
  const secondary = internal || name.includes("-");
  const packageDir = join(root, dir);
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: packageDir,
      mainEntryPointFilePath: join(packageDir, entry),
      compiler: { tsconfigFilePath: join(packageDir, "tsconfig.json") },
      apiReport: {
        enabled: true,
        reportFileName: `${name}.api.md`,
        reportFolder: join(root, "api"),
        reportTempFolder: join(root, "api", "temp"),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: "error" } },
        extractorMessageReporting: {
          default: { logLevel: "error" },
          // Release tags (@public, @beta) are not how this project marks stability.
          "ae-missing-release-tag": { logLevel: "none" },
          "ae-undocumented": { logLevel: internal ? "none" : "error", addToApiReportFile: false },
          "ae-forgotten-export": { logLevel: secondary ? "none" : "error", addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: "error" } },
      },
    },
    configObjectFullPath: join(packageDir, "api-extractor.json"),
    packageJsonFullPath: join(packageDir, "package.json"),
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    // Its "Analysis will use the bundled TypeScript version" note, once per entry, says nothing.
    messageCallback: (message) => {
      if (message.logLevel === "info" || message.logLevel === "verbose") message.handled = true;
    },
  });
  if (!result.succeeded) {
    failed += 1;
    console.error(
      `api: ${name}: ${result.errorCount} errors, ${result.warningCount} warnings${result.apiReportChanged ? "; the public surface changed (npm run api -- --update, then review api/)" : ""}`,
    );
  }
}
if (failed > 0) process.exitCode = 1;
