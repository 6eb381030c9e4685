import { describe, expect, it } from "vitest";
import { rowThreadLimits } from "../src/verify/row-pool.js";

/**
 * ADR 0046: the row threads' young generations share one budget, so that what they hold
 * together does not follow the thread count (issue 31), while the threads of a machine of
 * few cores do not spend their time collecting. verify-memory.test.ts measures this
 * machine's process; these are the bounds on a machine of any size.
 */
describe("the row threads' heap bounds", () => {
  it("give each thread 2 to 8 MiB of young generation, at most 16 MiB together up to 8 threads", () => {
    for (let threads = 1; threads <= 512; threads++) {
      const { maxYoungGenerationSizeMb: young, maxOldGenerationSizeMb: old } = rowThreadLimits(threads);
      expect(young, `${threads} threads`).toBeGreaterThanOrEqual(2);
      expect(young, `${threads} threads`).toBeLessThanOrEqual(8);
      expect(young * threads, `${threads} threads`).toBeLessThanOrEqual(Math.max(16, 2 * threads));
      expect(old).toBe(32);
    }
  });

  it("give the two threads of a two-core machine 8 MiB each, and sixteen threads 2 MiB each", () => {
    expect(rowThreadLimits(2).maxYoungGenerationSizeMb).toBe(8);
    expect(rowThreadLimits(3).maxYoungGenerationSizeMb).toBe(5);
    expect(rowThreadLimits(16).maxYoungGenerationSizeMb).toBe(2);
  });
});
