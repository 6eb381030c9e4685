#!/usr/bin/env node
// The public surface of every published entry point, as API Extractor reports it (api/*.api.md).
// `npm run api` fails when the built declarations differ from the checked-in report, or when an
// export has no doc comment; `npm run api -- --update` rewrites the reports after a deliberate
// change, which then shows up in review as a diff of api/.
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { readFileSync } from "node:fs";

const root = fileURLToPath(new URL("..", import.meta.url));
const update = process.argv.includes("--update");
const quiet = process.argv.includes("--silent") || process.env.npm_config_loglevel === "silent";

/**
 * [report name, package directory, declaration file of the entry point]. An `-internal` entry is
 * for aegis's own packages: reported, so a change still shows in review, but its exports need
 * not be documented and may name types the public entry exports. `@aegis/vectors`' two code
 * entries (the oracle and the exit codes) are internal entries too: aegis's own packages use
 * them, and the vectors' public face is their data. The `-browser` entries are neither public
 * nor internal: reported and not documented, like an internal entry, but not bounded (below).
 */
const ENTRY_POINTS = [
  ["format", "packages/format", "dist/index.d.ts"],
  ["format-internal", "packages/format", "dist/internal.d.ts"],
  ["format-browser", "packages/format", "dist/browser.d.ts"],
  ["format-durable", "packages/format", "dist/durable.d.ts"],
  ["envelope", "packages/envelope", "dist/index.d.ts"],
  ["envelope-internal", "packages/envelope", "dist/internal.d.ts"],
  ["policy", "packages/policy", "dist/index.d.ts"],
  ["policy-testing", "packages/policy", "dist/testing.d.ts"],
  ["policy-internal", "packages/policy", "dist/internal.d.ts"],
  ["proof", "packages/proof", "dist/index.d.ts"],
  ["proof-internal", "packages/proof", "dist/internal.d.ts"],
  ["mcp", "packages/mcp", "dist/index.d.ts"],
  ["mcp-internal", "packages/mcp", "dist/internal.d.ts"],
  ["mcp-v2", "packages/mcp", "dist/v2.d.ts"],
  ["cli", "packages/cli", "dist/index.d.ts"],
  ["cli-browser", "packages/cli", "dist/browser.d.ts"],
  ["vectors-oracle", "vectors", "dist/oracle.d.ts"],
];

/** An entry for aegis's own packages, counted with the public ones toward ALL_TOTAL (ADR 0030, ADR 0032). */
const isInternal = (name) => name.endsWith("-internal") || name.startsWith("vectors-");
/** An entry the report page bundles (the format's verifier, the CLI's views): bounded on its own, at BROWSER_PER_ENTRY names (ADR 0031). */
const isBrowser = (name) => name.endsWith("-browser");

let failed = 0;
for (const [name, dir, entry] of ENTRY_POINTS) {
  // The browser entries are what the report page bundles: internal parts of the verifier and
  // of the CLI's views, as `@aegis/format/internal` is for Node.
  const internal = isInternal(name) || isBrowser(name);
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
// The public face is deliberate (ADR 0030). A name is public only when a
// README example or a public signature needs it; what sibling packages share sits behind an
// `-internal` entry, which counts too. The bounds are held here so CI holds them.
const PUBLIC_PER_ENTRY = 70;
const PUBLIC_TOTAL = 250;
const ALL_TOTAL = 350;
// A browser entry serves the report page and a verifier in a browser; it is bounded on its own
// (issue 51), its names counted apart from the others (ADR 0031).
const BROWSER_PER_ENTRY = 100;
const counts = ENTRY_POINTS.map(([name]) => [name, exportedNames(name).length]);
const sum = (rows) => rows.reduce((total, [, count]) => total + count, 0);
const publicRows = counts.filter(([name]) => !isInternal(name) && !isBrowser(name));
const internalRows = counts.filter(([name]) => isInternal(name));
const publicTotal = sum(publicRows);
const allTotal = publicTotal + sum(internalRows);
if (!quiet) {
  for (const [name, count] of counts) {
    const kind = isBrowser(name) ? "browser" : isInternal(name) ? "internal" : "public";
    console.log(`api: ${name.padEnd(17)} ${String(count).padStart(4)} ${kind}`);
  }
  console.log(`api: public ${publicTotal}/${PUBLIC_TOTAL}, public and internal ${allTotal}/${ALL_TOTAL}`);
}
for (const [name, count] of publicRows) {
  if (count > PUBLIC_PER_ENTRY) {
    failed += 1;
    console.error(`api: ${name} exports ${count} names; a public entry point exports at most ${PUBLIC_PER_ENTRY}`);
  }
}
for (const [name, count] of counts.filter(([entry]) => isBrowser(entry))) {
  if (count > BROWSER_PER_ENTRY) {
    failed += 1;
    console.error(`api: ${name} exports ${count} names; a browser entry point exports at most ${BROWSER_PER_ENTRY}`);
  }
}
if (publicTotal > PUBLIC_TOTAL) {
  failed += 1;
  console.error(`api: the public entry points export ${publicTotal} names together; at most ${PUBLIC_TOTAL}`);
}
if (allTotal > ALL_TOTAL) {
  failed += 1;
  console.error(`api: public and internal entry points export ${allTotal} names together; at most ${ALL_TOTAL}`);
}
if (failed > 0) process.exitCode = 1;

/** The names an entry point's checked-in report exports, one per declaration (overloads once). */
function exportedNames(name) {
  const report = readFileSync(join(root, "api", `${name}.api.md`), "utf8");
  const names = new Set();
  for (const match of report.matchAll(/^export (?:declare )?(?:abstract )?(?:function|type|interface|const|let|var|class|enum|namespace) (\w+)/gm)) {
    names.add(match[1]);
  }
  for (const match of report.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of match[1].split(",")) {
      const alias = part
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (alias) names.add(alias);
    }
  }
  return [...names];
}
