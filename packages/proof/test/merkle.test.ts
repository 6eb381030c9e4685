import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TreeHasher, leafHash, verifyConsistency } from "../src/index.js";
import { EMPTY_ROOT, consistencyRanges, inclusionRanges, nodeHash, rangeRoots, verifyInclusion } from "../src/merkle.js";

/** RFC 6962 §2.1's MTH, written as the RFC states it: the oracle for the streaming hasher. */
function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return createHash("sha256").digest();
  if (leaves.length === 1) return leaves[0] ?? Buffer.alloc(0);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const leavesOf = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(`leaf ${i}`));

describe("the RFC 6962 tree", () => {
  it("streams the same root as the recursive definition, for every size up to 130", () => {
    for (let n = 0; n <= 130; n += 1) {
      const hasher = new TreeHasher();
      const leaves = leavesOf(n);
      for (const leaf of leaves) hasher.add(leaf);
      expect(hasher.root().equals(mth(leaves)), `size ${n}`).toBe(true);
    }
    expect(new TreeHasher().root().equals(EMPTY_ROOT)).toBe(true);
  });

  it("proves every leaf of every tree up to 70 leaves, and no leaf at another index or in another tree", async () => {
    for (let n = 1; n <= 70; n += 1) {
      const leaves = leavesOf(n);
      const root = mth(leaves);
      for (let i = 0; i < n; i += 1) {
        const proof = await rangeRoots(leaves, inclusionRanges(i, n));
        const leaf = leaves[i] ?? Buffer.alloc(0);
        expect(verifyInclusion(leaf, i, n, proof, root), `${i} of ${n}`).toBe(true);
        const other = leaves[(i + 1) % n] ?? Buffer.alloc(0);
        if (n > 1) expect(verifyInclusion(other, i, n, proof, root), `another leaf at ${i} of ${n}`).toBe(false);
        const bigger = mth(leavesOf(n + 1));
        expect(verifyInclusion(leaf, i, n + 1, proof, bigger), `${i} of ${n} against the tree of ${n + 1}`).toBe(false);
      }
    }
  });

  it("proves every prefix consistent with every larger tree up to 40, and refuses swapped roots", async () => {
    for (let n = 1; n <= 40; n += 1) {
      const leaves = leavesOf(n);
      const second = mth(leaves);
      for (let m = 0; m <= n; m += 1) {
        const first = mth(leaves.slice(0, m));
        const proof = await rangeRoots(leaves, consistencyRanges(m, n));
        expect(verifyConsistency(m, n, proof, first, second), `${m} to ${n}`).toBe(true);
        if (m > 0 && m < n) expect(verifyConsistency(m, n, proof, second, first), `${m} to ${n}, swapped`).toBe(false);
      }
    }
  });

  it("refuses an altered proof hash, whatever the tree and the leaf", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }), fc.nat(), fc.integer({ min: 0, max: 255 }))),
        async ([n, i, which, bit]) => {
          const leaves = leavesOf(n);
          const proof = await rangeRoots(leaves, inclusionRanges(i, n));
          const at = which % proof.length;
          const altered = proof.map((h, k) => (k === at ? Buffer.from(h.map((b, j) => (j === bit % 32 ? b ^ (1 << (bit % 8)) : b))) : h));
          expect(verifyInclusion(leaves[i] ?? Buffer.alloc(0), i, n, altered, mth(leaves))).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
