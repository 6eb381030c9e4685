import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { GENERATED_DIRS, generateVectors } from "../src/index.js";
import type { VectorSet } from "../src/vector-set.js";

const VECTORS = fileURLToPath(new URL("../../../vectors", import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

let set: VectorSet;
beforeAll(async () => {
  set = await generateVectors(`${VECTORS}/`);
});

describe("vectors/ (issue 6)", () => {
  it("the generator reproduces every committed vector file byte for byte, and nothing else is in its directories", () => {
    for (const [path, bytes] of set.files) {
      expect(Buffer.compare(readFileSync(join(VECTORS, path)), Buffer.from(bytes)), `${path} differs from the generator's; run npm run vectors:generate`).toBe(
        0,
      );
    }
    const committed = GENERATED_DIRS.flatMap((dir) => filesUnder(join(VECTORS, dir))).map((p) => relative(VECTORS, p));
    for (const path of committed) expect(set.files.has(path), `${path} is not generated: remove it or regenerate`).toBe(true);
  });
});
