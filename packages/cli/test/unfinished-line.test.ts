import { describe, expect, it } from "vitest";
import { describeUnfinishedCalls } from "../src/verify-report.js";

/**
 * The stderr line of `aegis verify` on calls that never finished (SPEC §13.4), as a CLI that
 * mirrors ours must write it: which ids are quoted, where `; and <m> more` goes, what `m` is.
 */
describe("the line on calls that never finished", () => {
  it("writes plain ASCII ids as they are, quotes every other (the empty one too), and counts the rest inside the parentheses", () => {
    const ids = ["ok_1.:@/+-", "", "a b", "café", "Ωmega", "tab\there", ...Array.from({ length: 20 }, (_, i) => `c${i}`)];
    const calls = ids.slice(0, 100).map((call_id, i) => ({ session_index: i < 3 ? 0 : 2, call_id }));
    expect(describeUnfinishedCalls({ count: 250, calls })).toBe(
      '250 calls never finished before their Session ended (session 0: ok_1.:@/+-, "", "a b"; session 2: "café", "Ωmega", "tab\\there", c0, c1, c2, c3; and 240 more); `aegis show` lists them',
    );
  });

  it("says one call in the singular, with nothing more", () => {
    expect(describeUnfinishedCalls({ count: 1, calls: [{ session_index: 4, call_id: "call-9" }] })).toBe(
      "1 call never finished before its Session ended (session 4: call-9); `aegis show` lists it",
    );
    expect(describeUnfinishedCalls({ count: 0, calls: [] })).toBeUndefined();
  });
});
