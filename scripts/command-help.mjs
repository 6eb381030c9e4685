// `npm run docs:help`: rewrites every command's `--help` block in docs/commands.md from what
// the built CLI prints (`npm run build` first). A block is a fenced block right after
//   <details><summary><code>aegis <command> --help</code></summary>
// packages/cli/test/readme.test.ts fails while any block differs from the real output, so
// a command's new option or text needs only this run (or the block pasted by hand).
//
//   node scripts/command-help.mjs [--check]   (--check: change nothing, exit 1 if any differs)
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
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
if (check) {
  if (stale.length > 0) {
    process.stderr.write(`docs/commands.md: the --help of ${stale.join(", ")} differs; run npm run docs:help\n`);
    process.exit(1);
  }
} else {
  writeFileSync(doc, next);
  process.stdout.write(
    stale.length === 0 ? "docs/commands.md: every --help block is current\n" : `docs/commands.md: rewrote the --help of ${stale.join(", ")}\n`,
  );
}
