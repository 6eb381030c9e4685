// `npm run docs:help`: rewrites every command's `--help` block in docs/commands.md from what
// the built CLI prints (`npm run build` first), and the manual page packed with the CLI,
// packages/cli/man/aegis.1, from `aegis man`. A block is a fenced block right after
//   <details><summary><code>aegis <command> --help</code></summary>
// packages/cli/test/readme.test.ts fails while any block differs from the real output, so
// a command's new option or text needs only this run (or the block pasted by hand).
//
//   node scripts/command-help.mjs [--check]   (--check: change nothing, exit 1 if any differs)
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const doc = join(root, "docs/commands.md");
const bin = join(root, "packages/cli/bin/aegis.js");
const check = process.argv.includes("--check");

const text = readFileSync(doc, "utf8");
const block = /(<details><summary><code>aegis ([a-z ]+) --help<\/code><\/summary>\n\n```\n)([\s\S]*?)(\n```)/g;
const stale = [];
const next = text.replace(block, (_whole, head, command, _old, tail) => {
  const help = execFileSync(process.execPath, [bin, ...command.split(" "), "--help"], { encoding: "utf8" }).trimEnd();
  if (help !== _old) stale.push(command);
  return `${head}${help}${tail}`;
});
const manFile = join(root, "packages/cli/man/aegis.1");
const man = execFileSync(process.execPath, [bin, "man"], { encoding: "utf8" });
let manBefore = "";
try {
  manBefore = readFileSync(manFile, "utf8");
} catch {
  // Not written yet.
}
if (man !== manBefore) stale.push("man (packages/cli/man/aegis.1)");
if (check) {
  if (stale.length > 0) {
    process.stderr.write(`docs/commands.md: the --help of ${stale.join(", ")} differs; run npm run docs:help\n`);
    process.exit(1);
  }
} else {
  writeFileSync(doc, next);
  mkdirSync(dirname(manFile), { recursive: true });
  writeFileSync(manFile, man);
  process.stdout.write(stale.length === 0 ? "docs/commands.md: every --help block is current\n" : `rewrote the --help of ${stale.join(", ")}\n`);
}
