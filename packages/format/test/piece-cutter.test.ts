import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PieceCutter, type LongRow, type Piece } from "../src/verify/piece-cutter.js";
import { bytesSource } from "./support/tuned.js";
import { RowSplitter, type Row } from "../src/wire/row-splitter.js";

/**
 * The split walk's reading (piece-cutter.ts): pieces of whole rows, and rows over the bound
 * followed to their end, must give the walk exactly the rows RowSplitter gives over the
 * whole record, wherever reads stop; and each piece carries the key of the last `open` before
 * it, the guess its reader checks signatures under.
 */

type Part = Piece | LongRow;

async function cutAll(
  bytes: Uint8Array,
  pieceBytes: number,
  limit: number,
  readBytes: number,
): Promise<{ parts: Part[]; copies: Uint8Array[]; progress: number[] }> {
  const progress: number[] = [];
  const cutter = new PieceCutter(bytesSource(bytes, readBytes), pieceBytes, limit, (n) => progress.push(n));
  const parts: Part[] = [];
  const copies: Uint8Array[] = [];
  for (let part = await cutter.next(); part !== undefined; part = await cutter.next()) {
    parts.push(part);
    copies.push(part.code === "piece" ? Uint8Array.from(new Uint8Array(part.bytes, 0, part.length)) : new Uint8Array(0));
    // Handed back, as the walk does once a piece is walked: a later piece is read into it.
    if (part.code === "piece") cutter.give(part.bytes);
  }
  return { parts, copies, progress };
}

/** A row without its number (the walk numbers them), its bytes as text. */
const plain = (row: Row): unknown => (row.code === "row" ? { offset: row.offset, text: Buffer.from(row.bytes).toString("latin1") } : { ...row, number: 0 });

function rowsOf(bytes: Uint8Array, limit: number, at = 0): unknown[] {
  const splitter = new RowSplitter(limit);
  return [...splitter.push(bytes), ...splitter.end()].map((row) => plain({ ...row, offset: row.offset + at }));
}

const KEY_A = "a".repeat(64);
const KEY_B = "0123456789abcdef".repeat(4);

const rowArb = fc.oneof(
  fc.constantFrom(
    `{"line_type":"open","public_key":"${KEY_A}","seq":0}`,
    `{"line_type":"open","public_key":"${KEY_B}","seq":0}`,
    // Not in canonical order: the key before the type.
    `{"public_key":"${KEY_B}","line_type":"open"}`,
    // A key cut short, or none in the row: no guess is taken from it.
    `{"line_type":"open","public_key":"abc"}`,
    `{"line_type":"open","seq":0}`,
    `{"line_type":"open","seq":0,"pad":"${"p".repeat(80)}"}`,
    `{"line_type":"open","public_key":"abc","pad":"${"p".repeat(80)}"}`,
    `{"line_type":"open","public_key":"${"a".repeat(40)}"}`,
    // A key in a row that is not an open, and rows that are not JSON at all.
    `{"line_type":"intent","public_key":"${KEY_A}"}`,
    `"line_type":"open","public_key":"${KEY_A}"`,
    `"public_key":"${KEY_B}","line_type":"open"`,
    // Torn after its key: the whole key is still there.
    `{"line_type":"open","public_key":"${KEY_B}`,
    `{"line_type":"intent","seq":1}`,
    "",
    " \t",
  ),
  fc.string({ unit: fc.constantFrom("x", "y", "{", "}", " ", "\u00e9"), maxLength: 90 }),
  // White_Space only, however long (U+3000 is three bytes, which reads may split): blank,
  // never a row; and a long row that is White_Space until its last byte.
  fc.nat({ max: 120 }).map((n) => " ".repeat(n)),
  fc.nat({ max: 60 }).map((n) => "\u3000 ".repeat(n)),
  fc.nat({ max: 120 }).map((n) => `${" ".repeat(n)}x`),
);

const recordArb = fc.tuple(fc.array(fc.tuple(rowArb, fc.constantFrom("\n", "\r\n")), { maxLength: 25 }), fc.boolean()).map(([rows, endsWithNewline]) => {
  const text = rows.map(([row, end]) => row + end).join("");
  return Buffer.from(endsWithNewline || text.length === 0 ? text : text.slice(0, text.endsWith("\r\n") ? -2 : -1));
});

/**
 * The guess after `piece`: in its last row that says `"line_type":"open"`, the 64 characters
 * after a `"public_key":"` of that row (the first after the type, else the last before it),
 * when the row holds them; else the guess before.
 */
function guessAfter(piece: Uint8Array, before: string | undefined): string | undefined {
  const rows = Buffer.from(piece).toString("latin1").split("\n");
  const open = rows.filter((r) => r.includes('"line_type":"open"')).at(-1);
  if (open === undefined) return before;
  const type = open.lastIndexOf('"line_type":"open"');
  const marker = '"public_key":"';
  const after = open.indexOf(marker, type);
  const at = after >= 0 ? after : open.lastIndexOf(marker, type);
  if (at < 0 || at + marker.length + 64 > open.length) return before;
  return open.slice(at + marker.length, at + marker.length + 64);
}

describe("the pieces of a record", () => {
  it("give the rows RowSplitter gives over the whole record, each at its offset, wherever reads stop", async () => {
    await fc.assert(
      fc.asyncProperty(
        recordArb,
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 8, max: 60 }),
        fc.integer({ min: 1, max: 200 }),
        async (bytes, pieceBytes, limit, readBytes) => {
          const { parts, copies, progress } = await cutAll(bytes, pieceBytes, limit, readBytes);
          const rows = parts.flatMap((part, i) => (part.code === "long" ? [plain(part.row)] : rowsOf(copies[i] ?? new Uint8Array(0), limit, part.offset)));
          expect(rows).toEqual(rowsOf(bytes, limit));
          // A piece is the record's bytes at its offset, and ends at a row's end.
          for (const [i, part] of parts.entries()) {
            if (part.code !== "piece") continue;
            expect(Buffer.from(copies[i] ?? []).equals(bytes.subarray(part.offset, part.offset + part.length))).toBe(true);
            const last = part.offset + part.length;
            expect(last === bytes.length || bytes[last - 1] === 0x0a, `piece ${i} ends at a row's end`).toBe(true);
          }
          // Progress is every byte read, as it grows, told after each read of some bytes.
          expect(progress.at(-1) ?? 0).toBe(bytes.length);
          expect(progress.every((n, i) => n > (progress[i - 1] ?? 0))).toBe(true);
          expect(progress[0] ?? 0).toBeLessThanOrEqual(readBytes);
          // A piece's buffer is the piece size, or one row of the bound and its CRLF: no larger.
          for (const part of parts) if (part.code === "piece") expect(part.bytes.byteLength).toBeLessThanOrEqual(Math.max(pieceBytes, limit + 2));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("each carries the key of the last `open` before it (a guess: only a whole key is taken)", async () => {
    await fc.assert(
      fc.asyncProperty(
        recordArb,
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 200, max: 400 }),
        fc.integer({ min: 1, max: 200 }),
        async (bytes, pieceBytes, limit, readBytes) => {
          const { parts, copies } = await cutAll(bytes, pieceBytes, limit, readBytes);
          let guess: string | undefined;
          for (const [i, part] of parts.entries()) {
            if (part.code !== "piece") continue;
            expect(part.hint, `piece ${i}`).toBe(guess);
            guess = guessAfter(copies[i] ?? new Uint8Array(0), guess);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a row over the bound is answered as one, with its length, and the row after it is read on", async () => {
    const long = "x".repeat(100);
    const bytes = Buffer.from(`{"a":1}\n${long}\r\n{"b":2}`);
    const { parts } = await cutAll(bytes, 16, 40, 7);
    expect(parts.map((p) => (p.code === "long" ? p.row : { offset: p.offset, length: p.length }))).toEqual([
      { offset: 0, length: 8 },
      { code: "too_long", number: 0, offset: 8, length: 101, limit: 40 },
      { offset: 110, length: 7 },
    ]);
  });
});

describe("the key a piece carries", () => {
  /** The key the piece after `rows` carries: the rows make one piece, a row after them another. */
  const hintAfter = async (rows: readonly string[]): Promise<string | undefined> => {
    const first = `${rows.join("\n")}\n`;
    const bytes = Buffer.from(`${first}${"{}".padEnd(300)}\n`);
    const { parts } = await cutAll(bytes, first.length, 1 << 10, 1 << 10);
    const after = parts.find((p) => p.code === "piece" && p.offset === first.length);
    if (after?.code !== "piece") throw new Error("the rows make one piece");
    return after.hint;
  };

  it("is taken from the open's own row, before its type when not after it, never from a later row", async () => {
    expect(await hintAfter([`{"public_key":"${KEY_B}","line_type":"open"}`, `{"line_type":"intent","public_key":"${KEY_A}"}`])).toBe(KEY_B);
    expect(await hintAfter([`{"line_type":"open","seq":0}`, `{"line_type":"intent","public_key":"${KEY_A}"}`])).toBeUndefined();
    expect(
      await hintAfter([`{"line_type":"open","public_key":"${"a".repeat(40)}"}`, `{"line_type":"intent","seq":1,"call_id":"${"c".repeat(80)}"}`]),
    ).toBeUndefined();
  });
});

describe("the buffers of a record's pieces", () => {
  it("a piece after one that grew to hold a long row starts with the bytes the grown one carried", async () => {
    // Pieces of 8 bytes, rows of up to 100: the 40-byte row grows a buffer, which then holds
    // the start of the 30-byte row after it, more than a kept 8-byte buffer could.
    const bytes = Buffer.from(`ab\ncd\nef\n${"x".repeat(40)}\n${"y".repeat(30)}\nz\n`);
    const { parts, copies } = await cutAll(bytes, 8, 100, 1 << 10);
    const rows = parts.flatMap((part, i) => (part.code === "long" ? [plain(part.row)] : rowsOf(copies[i] ?? new Uint8Array(0), 100, part.offset)));
    expect(rows).toEqual(rowsOf(bytes, 100));
  });

  const record = Buffer.from(Array.from({ length: 80 }, (_, i) => `{"row":${String(i).padStart(4, "0")}}\n`).join(""));

  it("are taken again once handed back, four kept at most, and only of the pieces' size", async () => {
    const cutter = new PieceCutter(bytesSource(record, 1 << 10), 64, 1 << 10, () => undefined);
    const first: ArrayBuffer[] = [];
    for (let i = 0; i < 6; i++) {
      const part = await cutter.next();
      if (part?.code !== "piece") throw new Error("a piece was expected");
      first.push(part.bytes);
    }
    expect(new Set(first).size).toBe(6);
    // Only a buffer of the pieces' size is kept: not this one, though none is kept yet.
    cutter.give(new ArrayBuffer(63));
    for (const bytes of first) cutter.give(bytes);
    const again: ArrayBuffer[] = [];
    for (let i = 0; i < 5; i++) {
      const part = await cutter.next();
      if (part?.code !== "piece") throw new Error("a piece was expected");
      again.push(part.bytes);
    }
    // The last four kept, latest first; the fifth piece takes a new buffer.
    expect(again.slice(0, 4)).toEqual([first[3], first[2], first[1], first[0]]);
    expect(again.slice(0, 4).every((b, i) => b === [first[3], first[2], first[1], first[0]][i])).toBe(true);
    expect(first.includes(again[4] ?? new ArrayBuffer(0))).toBe(false);
    expect(again[4]?.byteLength).toBe(64);
  });
});
