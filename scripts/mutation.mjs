// `npm run mutation` (ADR 0026): StrykerJS over the verifier core, then the total mutation
// score of each file on the last lines, against a bar of 90%. Arguments go to Stryker:
// `npm run mutation -- --incremental`, `npm run mutation -- --mutate packages/format/src/wire/json.ts`.
//
// Two passes. The first runs each mutant against the tests that reach it (`--ignoreStatic`):
// a mutant also reached while a test file loads or prepares ("hybrid") would
// otherwise run every test. The mutants reached only while modules load (module constants:
// the small-order table, the tags a typed Line may hold) are then run in a second pass, each
// against every test with the modules loaded anew, so no mutant goes untested. The score
// counts a mutant no test reaches as a survivor (Stryker's "covered" score leaves it out);
// only the equivalent mutants of stryker-equivalents.md, disabled in the source, are not counted.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

const BAR = 90;
const REPORT = "reports/mutation/mutation.json";
const STATIC = 'Static mutant (and "ignoreStatic" was enabled)';
const started = Date.now();

function stryker(args) {
  const run = spawnSync("npx", ["stryker", "run", "stryker.config.mjs", ...args], { stdio: "inherit" });
  if (run.status !== 0) {
    console.error(`error: Stryker exited with ${run.status ?? run.signal}`);
    process.exit(run.status ?? 1);
  }
  return JSON.parse(readFileSync(REPORT, "utf8"));
}

const args = process.argv.slice(2);
const first = stryker(["--ignoreStatic", ...args]);

// The second pass: every line that holds a static mutant, with every test.
const ranges = [];
for (const [path, file] of Object.entries(first.files)) {
  const lines = new Set(file.mutants.filter((m) => m.status === "Ignored" && m.statusReason === STATIC).map((m) => m.location.start.line));
  for (const line of [...lines].sort((a, b) => a - b)) ranges.push(`${relative(process.cwd(), path) || path}:${line}-${line}`);
}
const key = (path, m) => `${relative(process.cwd(), path) || path}:${m.location.start.line}:${m.location.start.column}:${m.mutatorName}:${m.replacement}`;
const secondPass = new Map();
if (ranges.length > 0) {
  // The caller's arguments but --mutate; an incremental run keeps this pass's results apart.
  const rest = args.filter((a, i) => a !== "--mutate" && a !== "-m" && args[i - 1] !== "--mutate" && args[i - 1] !== "-m");
  const incremental = args.includes("--incremental") ? ["--incrementalFile", "reports/mutation/stryker-incremental-static.json"] : [];
  const second = stryker([...rest, "--mutate", ranges.join(","), ...incremental]);
  for (const [path, file] of Object.entries(second.files)) for (const m of file.mutants) secondPass.set(key(path, m), m.status);
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);
const rows = [];
for (const [path, file] of Object.entries(first.files)) {
  let detected = 0;
  let undetected = 0;
  let equivalent = 0;
  let statics = 0;
  for (const m of file.mutants) {
    let status = m.status;
    if (status === "Ignored" && m.statusReason === STATIC) {
      statics++;
      // Not found again (it cannot be, unless the second pass failed): counted as not killed.
      status = secondPass.get(key(path, m)) ?? "NoCoverage";
      // The report holds every mutant's status, the second pass's for these.
      m.status = status;
      m.statusReason = `${STATIC}; run in the second pass, with every test`;
    }
    if (DETECTED.has(status)) detected++;
    else if (UNDETECTED.has(status)) undetected++;
    else if (status === "Ignored") equivalent++;
  }
  const score = detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected);
  rows.push({ file: relative(process.cwd(), path) || path, score, detected, undetected, equivalent, statics });
}
rows.sort((a, b) => a.file.localeCompare(b.file));
// The second pass wrote its own report over the first's: the report is both, as scored here.
writeFileSync(REPORT, JSON.stringify(first));

const minutes = ((Date.now() - started) / 60000).toFixed(1);
const width = Math.max(...rows.map((r) => r.file.length));
console.log(`\nMutation score per file: killed or timed out, of every mutant but the equivalents (bar ${BAR}%; ${minutes} min)`);
for (const r of rows) {
  const counts = `${String(r.detected).padStart(4)} killed ${String(r.undetected).padStart(3)} not ${String(r.equivalent).padStart(3)} equivalent ${String(r.statics).padStart(3)} static`;
  console.log(`  ${r.file.padEnd(width)}  ${r.score.toFixed(2).padStart(6)}%  ${counts}  ${r.score >= BAR ? "ok" : "BELOW"}`);
}
const below = rows.filter((r) => r.score < BAR);
if (below.length > 0) {
  console.error(`error: ${below.length} file(s) below ${BAR}%`);
  process.exit(1);
}
