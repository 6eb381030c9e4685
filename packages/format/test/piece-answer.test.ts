import { describe, expect, it } from "vitest";
import { ABSENT, AnswerWriter, CHECK, END, HASH_CHARS, KEY, KIND, MEMBERS, ROW_LINE, ROW_TOO_LONG, START, STRIDE } from "../src/verify/piece-answer.js";
import { DEFAULT_SPLIT, windowOf } from "../src/verify/split-tuning.js";

/**
 * A row thread's answer (piece-answer.ts) is read by the walking thread by position alone
 * (piece-rows.ts): a slot written in the wrong row, a string sent twice or a number at the
 * wrong index would give the walk a member the row does not hold.
 */
describe("a piece's answer, as a row thread writes it", () => {
  const hash = (i: number): string => i.toString(16).padStart(HASH_CHARS, "0");

  it("holds each row's numbers where the walking thread reads them, every member absent until set, past any number of rows", () => {
    const out = new AnswerWriter();
    const count = 600;
    for (let i = 0; i < count; i++) {
      const at = out.row(i % 2 === 0 ? ROW_LINE : ROW_TOO_LONG, 10 * i, 10 * i + 7, i % 3 === 0 ? undefined : hash(i));
      expect(at).toBe(STRIDE * i);
      out.set(at, KEY, i);
      // A member of this row only: the next row must not touch it.
      out.set(at, MEMBERS + 8, 2 * i);
    }
    const answer = out.finish(["k"], 6000, "k");
    expect(answer.rows).toHaveLength(STRIDE * count);
    for (let i = 0; i < count; i++) {
      const row = [...answer.rows.subarray(STRIDE * i, STRIDE * (i + 1))];
      const expected = new Array<number>(STRIDE).fill(ABSENT);
      expected[KIND] = i % 2 === 0 ? ROW_LINE : ROW_TOO_LONG;
      expected[START] = 10 * i;
      expected[END] = 10 * i + 7;
      expected[CHECK] = -1;
      expected[KEY] = i;
      expected[MEMBERS + 8] = 2 * i;
      expect(row, `row ${i}`).toEqual(expected);
    }
    expect(answer.hashes).toBe(Array.from({ length: count }, (_, i) => (i % 3 === 0 ? "0".repeat(HASH_CHARS) : hash(i))).join(""));
    expect([answer.keys, answer.readTo, answer.hintAt]).toEqual([["k"], 6000, "k"]);
  });

  it("sends each distinct string once and every number, each at the slot it answered", () => {
    const out = new AnswerWriter();
    const slots = [out.string("open"), out.number(7), out.string("intent"), out.string("open"), out.number(7), out.number(-0.5)];
    const answer = out.finish([], 0, undefined);
    expect(answer.strings).toEqual(["open", "intent"]);
    expect([...answer.numbers]).toEqual([7, 7, -0.5]);
    // Even: a string's index; odd: a number's.
    expect(slots).toEqual([0, 1, 2, 0, 3, 5]);
    expect(slots.map((slot) => ((slot & 1) === 1 ? answer.numbers[slot >> 1] : answer.strings[slot >> 1]))).toEqual(["open", 7, "intent", "open", 7, -0.5]);
  });

  it("an empty piece answers no rows", () => {
    const answer = new AnswerWriter().finish([], 0, undefined);
    expect([answer.rows.length, answer.numbers.length, answer.strings, answer.hashes]).toEqual([0, 0, [], ""]);
  });
});

describe("the pieces a split walk has out at once (SPEC §13: memory flat in the record and the threads)", () => {
  it("two a thread and one being walked, within the budget however many threads, and never fewer than two", () => {
    expect([1, 2, 3, 8, 64].map((threads) => windowOf(DEFAULT_SPLIT, threads))).toEqual([3, 5, 7, 16, 16]);
    expect(windowOf({ ...DEFAULT_SPLIT, pieceBytes: DEFAULT_SPLIT.budgetBytes }, 4)).toBe(2);
    expect(windowOf({ ...DEFAULT_SPLIT, budgetBytes: 10, pieceBytes: 3 }, 8)).toBe(3);
    // A piece of 0 bytes is taken as 1: the budget still bounds the window.
    expect(windowOf({ ...DEFAULT_SPLIT, budgetBytes: 4, pieceBytes: 0 }, 8)).toBe(4);
  });
});
