import { readFileSync } from "node:fs";
import { relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT, sources } from "./sources.js";

/** The classes in `file` that extend one of JavaScript's own error classes, by name. */
function errorSubclasses(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassLike(node))
      for (const clause of node.heritageClauses ?? [])
        for (const type of clause.types)
          if (
            clause.token === ts.SyntaxKind.ExtendsKeyword &&
            ts.isIdentifier(type.expression) &&
            /^(Aggregate|Eval|Range|Reference|Syntax|Type|URI)?Error$/.test(type.expression.text)
          )
            found.push(`${relative(ROOT, file)}: ${node.name?.text ?? "(anonymous)"} extends ${type.expression.text}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Issue 51: every error of aegis names its class, keeps its fault and words it one way (ADR 0030). */
describe("the error classes", () => {
  it("all extend FaultError, which alone extends Error", () => {
    const found = sources().flatMap(errorSubclasses);
    expect(found).toEqual(["packages/format/src/fault-error.ts: FaultError extends Error"]);
  });
});
