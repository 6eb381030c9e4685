import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every `ts` code block of the pages a user reads for the library: docs/library.md and each
 * package's README.
 * Each block is a whole program, written against the published packages only, and the
 * packaging test compiles it and runs it as a user who copied it would.
 */
const README_FILES = [
  "docs/library.md",
  "packages/format/README.md",
  "packages/envelope/README.md",
  "packages/policy/README.md",
  "packages/proof/README.md",
  "packages/mcp/README.md",
];

export interface Example {
  /** A file name for the program: the README's directory and the block's line. */
  readonly name: string;
  /** Where it came from, for a failure message. */
  readonly source: string;
  readonly code: string;
}

export function readmeExamples(root: string): Example[] {
  const examples: Example[] = [];
  for (const file of README_FILES) {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    let start = -1;
    for (let i = 0; i < lines.length; i += 1) {
      const line = lines[i] ?? "";
      if (start < 0 && line === "```ts") start = i + 1;
      else if (start >= 0 && line === "```") {
        const slug = file === "docs/library.md" ? "library" : (file.split("/")[1] ?? "package");
        examples.push({ name: `${slug}-${start + 1}`, source: `${file}:${start + 1}`, code: lines.slice(start, i).join("\n") });
        start = -1;
      }
    }
  }
  return examples;
}
