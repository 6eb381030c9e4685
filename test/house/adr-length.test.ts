import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./sources.js";

const MAX_WORDS = 1500;

/** Issue 51: an ADR states one decision; its measurements live in docs/benchmarks.md, its history in git. */
describe("the ADRs", () => {
  it(`each hold at most ${MAX_WORDS} words, as wc -w counts them`, () => {
    const dir = join(ROOT, "adr");
    const records = readdirSync(dir).filter((name) => /^\d{4}-.*\.md$/.test(name));
    expect(records.length).toBeGreaterThan(30);
    const long = records
      .map((name) => ({ name, words: readFileSync(join(dir, name), "utf8").split(/\s+/).filter(Boolean).length }))
      .filter(({ words }) => words > MAX_WORDS);
    expect(long).toEqual([]);
  });
});
