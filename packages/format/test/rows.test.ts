import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RowSplitter, type Row } from "../src/wire/row-splitter.js";

function split(chunks: readonly Buffer[], limit?: number): Row[] {
  const splitter = new RowSplitter(limit);
  const rows: Row[] = [];
  for (const chunk of chunks) rows.push(...splitter.push(chunk));
  rows.push(...splitter.end());
  return rows;
}

/** Rows with their bytes as plain numbers: a row may be a view of its chunk (a Buffer here) or a copy. */
const plain = (rows: Row[]) => rows.map((r) => (r.code === "row" ? { ...r, bytes: [...r.bytes] } : r));
const text = (rows: Row[]) => rows.map((r) => (r.code === "row" ? Buffer.from(r.bytes).toString("utf8") : `<${r.length}>`));

describe("rows of a record file (SPEC §1.1)", () => {
  it("splits on \\n, drops one trailing \\r, skips blank rows and numbers the rest from 1", () => {
    const rows = split([Buffer.from('{"a":1}\r\n\n  \t\n{"b":2}\n\u00a0\n{"c":3}')]);
    expect(text(rows)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(rows.map((r) => r.number)).toEqual([1, 2, 3]);
    expect(rows.map((r) => r.offset)).toEqual([0, 14, 25]);
  });

  it("treats U+FEFF as content, as the reference does, not as a blank", () => {
    expect(text(split([Buffer.from("\ufeff\n")]))).toEqual(["\ufeff"]);
  });

  it("gives the same rows however the input is chunked", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("{}", "a", "\n", "\r", " ", "é", "\r\n"), { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (parts, cuts) => {
          const whole = Buffer.from(parts.join(""));
          const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
          const chunks: Buffer[] = [];
          let from = 0;
          for (const p of points) {
            chunks.push(whole.subarray(from, p));
            from = p;
          }
          chunks.push(whole.subarray(from));
          expect(plain(split(chunks))).toEqual(plain(split([whole])));
          // And with a bound small enough that rows overflow across chunk boundaries.
          expect(plain(split(chunks, 3))).toEqual(plain(split([whole], 3)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a row over the limit that is all White_Space is still blank: skipped, not counted", () => {
    const rows = split([Buffer.from(" ".repeat(10)), Buffer.from("\u3000".repeat(4)), Buffer.from("\nok\n")], 15);
    expect(rows).toEqual([{ code: "row", number: 1, offset: 23, bytes: Buffer.from("ok") }]);
  });

  it("a White_Space row exactly one byte over the limit is blank too, at every length around the bound", () => {
    // The one-byte slack kept for a trailing \r once let a blank row of limit+1 bytes through as too long.
    for (const extra of [0, 1, 2, 3]) {
      expect(split([Buffer.from(`${" ".repeat(15 + extra)}\nok\n`)], 15), `limit + ${extra}`).toEqual([
        { code: "row", number: 1, offset: 16 + extra, bytes: Buffer.from("ok") },
      ]);
    }
  });

  it("a row over the limit that begins with U+FEFF is content, not blank, however it is chunked", () => {
    const row = Buffer.from(`\ufeff${" ".repeat(20)}\nok\n`);
    for (const chunks of [[row], [row.subarray(0, 2), row.subarray(2)], [row.subarray(0, 3), row.subarray(3)]])
      expect(text(split(chunks, 15))).toEqual(["<23>", "ok"]);
  });

  it("reports a row over the limit without keeping its bytes, and reads on after it", () => {
    const rows = split([Buffer.from("x".repeat(10)), Buffer.from("y".repeat(10)), Buffer.from("\nok\n")], 15);
    expect(rows).toEqual([
      { code: "too_long", number: 1, offset: 0, length: 20, limit: 15 },
      { code: "row", number: 2, offset: 21, bytes: Buffer.from("ok") },
    ]);
  });
});
