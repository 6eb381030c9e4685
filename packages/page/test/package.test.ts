import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The page is a package of its own (adr/0031): its sources reach other packages only through
 * their browser entries, by package name, and what it builds carries no stand-in for Node.
 */
const PAGE = fileURLToPath(new URL("../", import.meta.url));
const SRC = join(PAGE, "src");
const BUILT = fileURLToPath(new URL("../../cli/dist/report/", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every module a source file names: static imports and exports, and `import(...)`. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map(
    (m) => m[1] ?? m[2] ?? "",
  );
}

describe("@aegis/page", () => {
  it("imports its own modules by relative path and others only as @aegis/format/browser or @aegis/cli/browser", () => {
    const outside: string[] = [];
    const named = new Set<string>();
    for (const file of sources(SRC))
      for (const spec of specifiers(file)) {
        if (spec.startsWith(".")) {
          const target = resolve(dirname(file), spec);
          if (relative(SRC, target).startsWith("..")) outside.push(`${relative(PAGE, file)}: ${spec}`);
        } else named.add(spec);
      }
    expect(outside).toEqual([]);
    expect([...named].sort()).toEqual(["@aegis/cli/browser", "@aegis/format/browser"]);
  });

  it("builds a script and a worker that name no Buffer, process or require, and carry no polyfill (npm run build first)", () => {
    for (const name of ["page.js", "worker.js"]) {
      const text = readFileSync(join(BUILT, name), "utf8");
      expect(text, name).toContain("// packages/format/dist/verify/signature-batch.js");
      expect(text.match(/(?<![\w$.])(?:Buffer\b|process\.|require\()/g), name).toBeNull();
      expect(text, name).not.toMatch(/node_modules\/(buffer|base64-js|ieee754)\//);
    }
    // Issue 31: the workers read the rows, the page links them (adr/0028).
    const worker = readFileSync(join(BUILT, "worker.js"), "utf8");
    expect(worker).toContain("// packages/page/src/piece-read.ts");
    // Rows decoded as slices of their piece's text (build.mjs); SHA-256 is noble's, never a copy of ours.
    expect(worker).toContain("// packages/page/src/piece-text.ts");
    expect(worker).toContain("// packages/format/dist/crypto/sha256-noble.js");
    // The page's pieces walked by the format's one piece driver, the one aegis verify --threads N uses (issue 51).
    const page = readFileSync(join(BUILT, "page.js"), "utf8");
    expect(page).toContain("// packages/page/src/record-pieces.ts");
    expect(page).toContain("// packages/format/dist/verify/split-walk.js");
  });
});
