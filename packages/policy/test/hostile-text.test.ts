import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tryParseBindings } from "../src/bindings.js";
import { tryParsePolicySet } from "../src/parse.js";

/**
 * Hostile text as a property (issue 12): whatever a Policy Set or bindings file holds, the
 * readers answer a value or problems, never an exception, and the same text the same answer.
 */
describe("the Policy Set and bindings readers", () => {
  const yamlish = fc.oneof(
    fc.string({ maxLength: 400 }),
    fc
      .array(
        fc.constantFrom(
          "version: 1\n",
          "rules:\n",
          "  - id: a\n",
          "    action: allow\n",
          "&a ",
          "*a\n",
          "!!str ",
          "---\n",
          "[",
          "]",
          "{",
          "}",
          ": ",
          "- ",
          "  ",
          "\t",
          "\uFEFF",
          "\u0000",
          "\r\n",
          "0x1f\n",
          "1e999\n",
          "'\\ud800'\n",
          '"\\ud800"\n',
        ),
        { maxLength: 60 },
      )
      .map((p) => p.join("")),
  );

  it("any text: a set or problems, never an exception; the same text, the same answer", () => {
    fc.assert(
      fc.property(yamlish, (text) => {
        const first = tryParsePolicySet(text);
        expect(first.ok || first.problems.length > 0).toBe(true);
        expect(JSON.stringify(tryParsePolicySet(text), (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).toBe(
          JSON.stringify(first, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)),
        );
        const bindings = tryParseBindings(text);
        expect(bindings.ok || bindings.problems.length > 0).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
