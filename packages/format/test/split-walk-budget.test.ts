import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Verification, WalkedLine } from "../src/index.js";
import { HASH_CHARS, STRIDE, type PieceAnswer } from "../src/verify/piece-answer.js";
import { sharedRowPool } from "../src/verify/row-pool.js";
import { readPiece } from "../src/verify/row-work.js";
import { verifySplitBytes } from "./support/tuned.js";
import { DEFAULT_SPLIT, rowBudget, type SplitTuning } from "../src/verify/split-tuning.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { tempDir, writeSession } from "./support/chains.js";

/**
 * A row thread reads no more rows of a piece than its budget, one for each 64 bytes, and
 * says where the rest starts; the calling thread reads the rest, by the same readPiece, only
 * if the walk gets there (ADR 0027, point 7). A piece of tiny rows then answers about twice
 * its size, not forty times, and the walk is given the same rows: the verdict must be the
 * sequential walk's wherever the budget cuts a piece and wherever the walk stops.
 */
afterAll(async () => {
  await sharedRowPool(2).close();
});

/** What an answer holds, in bytes: what crosses from a thread and stays until its piece is walked. */
function answerBytes(answer: PieceAnswer): number {
  const strings = [...answer.strings, ...answer.keys].reduce((n, s) => n + 2 * s.length, 0);
  return answer.rows.byteLength + answer.numbers.byteLength + answer.hashes.length + strings;
}

describe("a thread's answer for a piece of tiny rows", () => {
  it("a piece of 256 KiB of rows `1`: 4,096 rows answered, about twice the piece, and the rest said to start after them", () => {
    const piece = Buffer.from("1\n".repeat(128 << 10));
    const budget = rowBudget(DEFAULT_SPLIT, piece.length);
    expect(budget).toBe(4096);
    const answer = readPiece(piece, 1 << 20, undefined, budget);
    expect(answer.rows.length).toBe(4096 * STRIDE);
    expect(answer.hashes.length).toBe(4096 * HASH_CHARS);
    expect(answer.readTo).toBe(2 * 4096);
    // Every row read at once would be 131,072 rows, some 16 MB.
    expect(answerBytes(answer)).toBeLessThan(2 * piece.length);
  });

  it("the rest, read from where the answer says, is the piece's next rows", () => {
    const piece = Buffer.from(["1", "", "[]", "  ", "x", "{}"].join("\n"));
    const first = readPiece(piece, 1 << 20, undefined, 2);
    expect(first.rows.length).toBe(2 * STRIDE);
    // Blank rows are no rows: the rest starts at the row after them.
    expect(first.readTo).toBe(piece.indexOf("x"));
    const rest = readPiece(piece.subarray(first.readTo), 1 << 20, first.hintAt, 2);
    expect(rest.rows.length).toBe(2 * STRIDE);
    expect(rest.readTo).toBe(piece.length - first.readTo);
  });
});

describe("the split walk with a row budget answers as the sequential walk", () => {
  let rows: string[];

  beforeAll(async () => {
    // open, 4 calls (intent, outcome), a parked call and its decision, close: 12 rows, Verified.
    rows = readFileSync(await writeSession(join(tempDir(), "session.aarl"), { calls: 4 }), "utf8")
      .trimEnd()
      .split("\n");
    expect(rows).toHaveLength(12);
  });

  const record = (parts: readonly string[]): Buffer => Buffer.from(`${parts.join("\n")}\n`);

  /** A tuning whose budget for the whole record, as one piece, is `budget` rows. */
  function oneThreadBudget(bytes: Buffer, budget: number): SplitTuning {
    const tuning = { pieceBytes: 1 << 20, budgetBytes: 4 << 20, bytesPerRow: Math.ceil(bytes.length / budget) };
    expect(rowBudget(tuning, bytes.length), `budget ${budget} of ${bytes.length} bytes`).toBe(budget);
    return tuning;
  }

  async function both(bytes: Buffer, tuning: SplitTuning, readBytes = 1 << 20): Promise<{ want: Verification; lines: readonly (readonly [number, number])[] }> {
    const lines: (readonly [number, number])[] = [];
    const want = verifyChainBytes(bytes, { onLine: (l: WalkedLine) => lines.push([l.line, l.offset]) });
    // On threads, and on this thread (where a mutant of the reading is reached).
    for (const readers of [2, "here"] as const) {
      const told: (readonly [number, number])[] = [];
      expect(await verifySplitBytes(bytes, { onLine: (l: WalkedLine) => told.push([l.line, l.offset]) }, readers, tuning, readBytes)).toEqual(want);
      expect(told).toEqual(lines);
      expect(await verifySplitBytes(bytes, {}, readers, tuning, readBytes)).toEqual(want);
    }
    return { want, lines };
  }

  it("the walk goes on past the budget: a Verified record, the piece cut after its first row, in its middle, before its last row, or not at all", async () => {
    const bytes = record(rows);
    for (let budget = 1; budget <= rows.length; budget++) {
      const { want, lines } = await both(bytes, oneThreadBudget(bytes, budget));
      expect(want.verdict.status, `budget ${budget}`).toBe("verified");
      expect(lines).toHaveLength(rows.length);
    }
    // Pieces of a row or a few, read at odd sizes, one row answered a piece.
    await both(bytes, { pieceBytes: 600, budgetBytes: 4 << 20, bytesPerRow: 1 << 20 }, 777);
  });

  it("a row the walk stops at, at the piece's start, in its middle or at its end, before, at or after the budget's cut", async () => {
    // `1`: not an object, the walk stops at it. `x`: does not parse, so the walk needs the
    // next row (Tampered) or its absence (a torn final row): the row after the cut, when
    // it falls just before the cut. `{}`: parses and canonicalizes, no `line_type`.
    let tampered = 0;
    for (const bad of ["1", "x", "{}"]) {
      for (let at = 0; at <= rows.length; at++) {
        const bytes = record([...rows.slice(0, at), bad, ...rows.slice(at)]);
        for (let budget = 1; budget <= rows.length + 1; budget++) {
          const { want } = await both(bytes, oneThreadBudget(bytes, budget));
          if (want.verdict.status === "tampered") tampered++;
        }
      }
    }
    // Every case but `x` as the last row (a torn write, Indeterminate) is Tampered.
    expect(tampered).toBe(3 * (rows.length + 1) * (rows.length + 1) - (rows.length + 1));
  });
});
