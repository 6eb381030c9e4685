import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT, sources } from "./sources.js";

/** A workspace package's entry points, by import specifier, as each package.json exports them. */
function entries(): Map<string, string> {
  const found = new Map<string, string>();
  for (const name of readdirSync(join(ROOT, "packages"))) {
    const manifest = JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as { name: string; exports?: Record<string, unknown> };
    for (const subpath of Object.keys(manifest.exports ?? {})) {
      const entry = subpath === "." ? "index" : subpath.slice(2);
      found.set(subpath === "." ? manifest.name : `${manifest.name}/${entry}`, join(ROOT, "packages", name, "src", `${entry}.ts`));
    }
  }
  return found;
}

/** The source files `file` imports: static, type-only, re-exports and dynamic `import()` alike. */
function importsOf(file: string, packages: Map<string, string>): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    if (fileName.startsWith(".")) return [resolve(dirname(file), fileName.replace(/\.js$/, ".ts"))];
    const entry = packages.get(fileName);
    return entry === undefined ? [] : [entry];
  });
}

/** The strongly connected components of more than one file, or of one file that imports itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Issue 51: a reader follows a value through the house without coming back to a room already left. */
describe("the packages' imports", () => {
  it("make no circle, type-only imports included", () => {
    const packages = entries();
    const graph = new Map(sources().map((file) => [file, importsOf(file, packages)]));
    // The reading itself is checked: a relative import and a package's entry are both followed.
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get(join(ROOT, "packages/cli/src/one-file.ts"))).toContain(join(ROOT, "packages/format/src/internal.ts"));
    const named = circles(graph).map((component) => component.map((file) => relative(ROOT, file)));
    expect(named).toEqual([]);
  });
});
