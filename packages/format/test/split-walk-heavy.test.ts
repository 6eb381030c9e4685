import { afterAll, describe, expect, it } from "vitest";
import { verifySplitBytes } from "./support/tuned.js";
import { sharedRowPool } from "../src/verify/row-pool.js";
import { DEFAULT_SPLIT } from "../src/verify/split-tuning.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { readLines, reseal, tempDir, writeSession } from "./support/chains.js";
import { join } from "node:path";

/**
 * Pieces a row thread cannot read within its small heap (ADR 0027): many tiny rows, or rows
 * near the bound made of many small values. The sequential walk reads them; the split walk
 * must give its answer too, never a thread's failure (a review found `aegis verify` printing
 * ERR_WORKER_OUT_OF_MEMORY on both, where `--threads 0` answered).
 */
afterAll(async () => {
  await sharedRowPool(2).close();
});

const split = (bytes: Uint8Array) => verifySplitBytes(bytes, {}, 2, DEFAULT_SPLIT, 1 << 20);

describe("the split walk on pieces too heavy for a row thread", () => {
  it("6 MB of rows `1`: Tampered at line 1, as the sequential walk says", async () => {
    const bytes = Buffer.from("1\n".repeat(3 << 20));
    const sequential = verifyChainBytes(bytes);
    expect(sequential.verdict.status).toBe("tampered");
    expect(await split(bytes)).toEqual(sequential);
  });

  it("a signed record whose intents each carry a member of 330,000 empty objects (990 KB a row): Verified", async () => {
    const path = await writeSession(join(tempDir(), "heavy.aarl"), { calls: 5 });
    const lines = readLines(path).map((line) => (line["line_type"] === "intent" ? { ...line, x_payload: Array.from({ length: 330_000 }, () => ({})) } : line));
    const bytes = Buffer.from(reseal(lines));
    const sequential = verifyChainBytes(bytes);
    expect(sequential.verdict.status).toBe("verified");
    expect(await split(bytes)).toEqual(sequential);
  }, 120_000);
});
