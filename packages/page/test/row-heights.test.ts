import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RowHeights } from "../src/view/row-heights.js";

/** The report table's rows grow to their wrapped text; their offsets must stay exact as they do. */
describe("RowHeights", () => {
  it("gives each row's top as the sum of the heights before it, and the row covering any offset, through any updates", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 300 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 200 })), { maxLength: 50 }),
        (initial, updates) => {
          const expected = [...initial];
          const heights = new RowHeights(Float64Array.from(initial));
          for (const [at, height] of updates) {
            const position = at % expected.length;
            expect(heights.set(position, height)).toBe(expected[position] !== height);
            expected[position] = height;
          }
          let top = 0;
          expected.forEach((height, position) => {
            expect(heights.top(position)).toBe(top);
            expect(heights.height(position)).toBe(height);
            // The first and last offsets inside the row are the row's own.
            expect(heights.at(top)).toBe(position);
            expect(heights.at(top + height - 0.5)).toBe(position);
            top += height;
          });
          expect(heights.total()).toBe(top);
          expect(heights.at(top + 1000)).toBe(expected.length - 1);
        },
      ),
    );
  });
});
