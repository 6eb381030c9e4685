#!/usr/bin/env node
// The checks `npm test` makes before the tests: the tests' types, `npm run lint` (formatting,
// then ESLint), the API reports and knip. Each is one process that keeps about one core busy;
// they run in two lanes at once, each lane in order, and each check's output is printed whole
// when it ends, so two never interleave. Fails when any check failed, once both lanes are done.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules", ".bin", name);

/** [name, command, arguments]; ESLint alone takes about as long as the rest together (docs/benchmarks.md). */
const LANES = [
  [["eslint", bin("eslint"), ["."]]],
  [
    ["tsc -p tsconfig.check.json", bin("tsc"), ["-p", "tsconfig.check.json"]],
    ["npm run lint:format", "npm", ["run", "lint:format", "--silent"]],
    ["api reports", process.execPath, [join(root, "scripts", "api-report.mjs"), "--silent"]],
    ["knip", bin("knip"), ["--no-progress"]],
  ],
];

/** Run one check to its end: its exit code and everything it wrote, in order. */
function check([name, command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", (error) => resolve({ name, code: 1, output: `${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ name, code: code ?? 1, output: Buffer.concat(output).toString("utf8"), signal }));
  });
}

async function lane(checks) {
  const failed = [];
  for (const c of checks) {
    const result = await check(c);
    if (result.output !== "") process.stdout.write(result.output.endsWith("\n") ? result.output : `${result.output}\n`);
    if (result.code !== 0) {
      process.stderr.write(`check failed: ${result.name} (${result.signal ?? `exit ${result.code}`})\n`);
      failed.push(result.name);
    }
  }
  return failed;
}

const failed = (await Promise.all(LANES.map(lane))).flat();
if (failed.length > 0) {
  process.stderr.write(`${failed.length} of the checks before the tests failed: ${failed.join(", ")}\n`);
  process.exit(1);
}
