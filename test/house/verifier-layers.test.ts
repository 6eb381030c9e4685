import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./sources.js";
import { LAYERS } from "./verifier-core.js";

type Layer = keyof typeof LAYERS;

/** What each layer may import, within the folder. */
const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  core: ["core"],
  threads: ["core", "threads"],
  // many-files verifies each file through the way in, as a user would.
  drivers: ["core", "threads", "entry"],
  entry: ["core", "threads", "drivers"],
};

const DIR = join(ROOT, "packages/format/src/verify");
const layerOf = new Map<string, Layer>(Object.entries(LAYERS).flatMap(([layer, files]) => files.map((f) => [f, layer as Layer] as const)));

/** The files of the folder that `file` imports (type-only and re-exports included), by name. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(DIR, `${file}.ts`), "utf8"), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    const m = /^\.\/([a-z0-9-]+)\.js$/.exec(fileName);
    return m?.[1] === undefined ? [] : [m[1]];
  });
}

describe("the verifier: a core, its threads and its drivers", () => {
  const files = readdirSync(DIR)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => f.slice(0, -3));

  it("places every file of verify/ in one layer", () => {
    expect(files.filter((f) => !layerOf.has(f))).toEqual([]);
    expect([...layerOf.keys()].filter((f) => !files.includes(f))).toEqual([]);
  });

  it("lets each layer import only what it may: the core nothing else, no driver another", () => {
    const wrong = files.flatMap((file) => {
      const layer = layerOf.get(file);
      if (layer === undefined) return [];
      return importsOf(file)
        .filter((imported) => {
          const to = layerOf.get(imported);
          return to === undefined || !MAY_IMPORT[layer].includes(to) || (layer === "drivers" && to === "drivers");
        })
        .map((imported) => `${file} (${layer}) imports ${imported} (${layerOf.get(imported) ?? "?"})`);
    });
    expect(wrong).toEqual([]);
  });
});
