import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * SPEC.md is normative: every section the code cites must exist, and every MUST it tags
 * must be named by a test.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const spec = readFileSync(join(ROOT, "SPEC.md"), "utf8");

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else if (/\.(ts|js)$/.test(name)) out.push(path);
  }
  return out;
}

const sections = new Set([...spec.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]));
const sources = files(join(ROOT, "packages"));
const tests = sources.filter((f) => f.includes("/test/"));

describe("SPEC.md", () => {
  it("every section cited as SPEC §n exists", () => {
    const cited = new Map<string, string>();
    for (const file of sources) {
      for (const m of readFileSync(file, "utf8").matchAll(/SPEC §(\d+(?:\.\d+)?)/g)) cited.set(m[1] ?? "", file);
    }
    expect(cited.size).toBeGreaterThan(10);
    for (const [section, file] of cited) expect(sections.has(section), `§${section} cited in ${file}`).toBe(true);
  });

  it("every tagged MUST is named by a test", () => {
    const tags = new Set([...spec.matchAll(/\*\*\[(M\d+\.\d+)\]\*\*/g)].map((m) => m[1] ?? ""));
    expect(tags.size).toBeGreaterThan(15);
    const testText = tests.map((f) => readFileSync(f, "utf8")).join("\n");
    for (const tag of tags) expect(testText.includes(`[${tag}]`), `no test names [${tag}]`).toBe(true);
  });

  it("every MUST in the normative sections carries a tag", () => {
    const normative = spec.slice(0, spec.indexOf("## 13. aegis-ts extensions"));
    const paragraphs = normative.split(/\n\s*\n/).filter((p) => /\bMUST\b/.test(p) && !p.startsWith("**Conventions.**"));
    for (const p of paragraphs) expect(/\[M\d+\.\d+\]/.test(p), p.slice(0, 120)).toBe(true);
  });
});
