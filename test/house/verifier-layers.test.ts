import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./sources.js";

/**
 * The verifier (`packages/format/src/verify/`) is a core with drivers around it (issue 51): the
 * core (the walk, the verdict, the signature checker, the unfinished-call ledger, the piece
 * formats and the piece driver the page and `--threads` share) imports nothing else; the
 * threads import the core; each driver (one pass, a file split across threads, many files, a
 * verifying read) imports the core and the threads, and never another driver; the way in
 * chooses the driver (and the one file's thread entry, the worker). Every file is in exactly one layer, so a new one must be placed.
 */
const LAYERS = {
  core: [
    "deferred-checks",
    "exit-code",
    "piece-answer",
    "piece-cutter",
    "piece-rows",
    "row-verifier",
    "row-work",
    "signature-batch",
    "signature-checker",
    "split-tuning",
    "split-walk",
    "unfinished-calls",
    "verdict",
    "verify-options",
    "walk",
  ],
  threads: ["check-pool", "file-messages", "row-pool", "row-worker", "signature-pool", "signature-worker", "worker-pool", "worker-url"],
  drivers: ["file-worker", "many-files", "one-pass", "split-file", "verifying-read"],
  // The ways in: a record's verification, and a thread of the one file (which starts any worker).
  entry: ["verify-record", "worker-entry"],
} as const;
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
