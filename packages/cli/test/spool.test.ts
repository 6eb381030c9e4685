import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Spool, type SpoolStream } from "../src/spool.js";

describe("Spool", () => {
  it("gives back every text, in order, each for its stream, whether it stayed in memory or went to a file", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom<SpoolStream>("out", "err"), fc.string({ unit: "grapheme", maxLength: 300 })), { maxLength: 200 }),
        fc.integer({ min: 0, max: 2000 }),
        async (texts, memoryLimit) => {
          const spool = new Spool(memoryLimit);
          for (const [stream, text] of texts) spool.add(stream, text);
          const back: [SpoolStream, string][] = [];
          await spool.replay((stream, text) => {
            back.push([stream, text]);
          });
          spool.dispose();
          // Consecutive texts for one stream may come back joined: compare each stream's
          // text, and the order in which the streams alternate.
          const joined = (list: readonly (readonly [SpoolStream, string])[]): [SpoolStream, string][] =>
            list.reduce<[SpoolStream, string][]>((runs, [stream, text]) => {
              if (text.length === 0) return runs;
              const last = runs[runs.length - 1];
              if (last !== undefined && last[0] === stream) last[1] += text;
              else runs.push([stream, text]);
              return runs;
            }, []);
          expect(joined(back)).toEqual(joined(texts));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("holds more than a chunk of file between reads", async () => {
    const spool = new Spool(0);
    const text = "x".repeat(700_000);
    for (let i = 0; i < 5; i++) spool.add(i % 2 === 0 ? "out" : "err", `${i}${text}`);
    const back: string[] = [];
    await spool.replay((_, t) => {
      back.push(t);
    });
    spool.dispose();
    // Each text is longer than a run, and the streams alternate: each comes back whole.
    expect(back.map((t) => t.length)).toEqual([700_001, 700_001, 700_001, 700_001, 700_001]);
    expect(back.map((t) => t[0])).toEqual(["0", "1", "2", "3", "4"]);
  });
});
