import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MAX_ROW_BYTES, fromCheckedHex, verifyRecordBytes, verifyStrict, verifyingKey, type PieceReader } from "@aegis/format/browser";
// The format's reader of an answer, a row at a time: what the split walk walks the workers' answers with.
import { PieceRows } from "../../format/src/verify/piece-rows.js";
import { wholeRecord, type RecordSource } from "../src/decode.js";
import { readPiece, type CheckOne } from "../src/piece-read.js";
import { splitVerify } from "../src/record-pieces.js";

/**
 * The page's split walk (issue 31, adr/0028), the format's `walkPieces` over the page's pieces, on this thread: the pieces read by the workers'
 * own code (piece-read.ts), the answers walked by the format's walk. Its verdict must be
 * the sequential walk's, whole, on every chain vector: with pieces of one row and of many,
 * with the record arriving in small chunks, and with every guess of a Session's key wrong.
 */
const VECTORS = fileURLToPath(new URL("../../../vectors/", import.meta.url));
const manifest = JSON.parse(readFileSync(`${VECTORS}manifest.json`, "utf8")) as {
  vectors: { id: string; kind: string; input: { record?: string; trust?: string[] | null } }[];
};
const chains = manifest.vectors.filter((v) => v.kind === "chain");

const strict: CheckOne = (keyHex, message, signature) => {
  const key = verifyingKey(fromCheckedHex(keyHex));
  return typeof key !== "string" && verifyStrict(key, message, signature);
};
/** Half the answers later, as WebCrypto's come. */
let flip = 0;
const mixed: CheckOne = (keyHex, message, signature) =>
  flip++ % 2 === 0 ? strict(keyHex, message, signature) : Promise.resolve(strict(keyHex, message, signature));

function reader(hint: (given: string | undefined) => string | undefined = (given) => given): PieceReader {
  return {
    size: 2,
    read: async ({ bytes, length, limit, hint: given, budget }) => ({
      answer: await readPiece(new Uint8Array(bytes, 0, length), limit, hint(given), mixed, budget),
      bytes,
    }),
  };
}

/** The record's bytes arriving `chunk` at a time, each a task later. */
function trickled(bytes: Uint8Array<ArrayBuffer>, chunk: number): RecordSource {
  let at = 0;
  const step = async (): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, 0));
    at = Math.min(bytes.length, at + chunk);
  };
  const available = async (have: number): Promise<number> => {
    while (at <= have && at < bytes.length) await step();
    return at;
  };
  return { bytes, available, whole: (async () => (await available(bytes.length), bytes))() };
}

const none = (): Promise<void> => Promise.resolve();

describe("the page's split walk", () => {
  for (const v of chains) {
    it(`gives ${v.id} the sequential walk's verification`, async () => {
      const bytes = new Uint8Array(readFileSync(`${VECTORS}${v.input.record ?? ""}`));
      const trust = Array.isArray(v.input.trust) ? { trust: v.input.trust } : {};
      const want = await verifyRecordBytes(bytes, trust);
      for (const pieceBytes of [1, 300, 256 << 10]) {
        const split = await splitVerify(wholeRecord(bytes), trust, reader(), none, { pieceBytes });
        expect(split.verification, `pieces of ${pieceBytes} bytes`).toEqual(want);
        // One row a worker: the rest of each piece read on this thread (the row budget, adr/0027 point 7).
        const budgeted = await splitVerify(wholeRecord(bytes), trust, reader(), none, { pieceBytes, bytesPerRow: 1 << 20 });
        expect(budgeted.verification, `pieces of ${pieceBytes} bytes, a row a worker`).toEqual(want);
      }
      expect((await splitVerify(trickled(bytes, 97), trust, reader(), none, { pieceBytes: 500 })).verification, "trickled").toEqual(want);
      // Every guess wrong: each check the walk asks for is made on this thread.
      const wrong = await splitVerify(
        wholeRecord(bytes),
        trust,
        reader(() => "ab".repeat(32)),
        none,
        { pieceBytes: 1 },
      );
      expect(wrong.verification, "no right guess").toEqual(want);
      const unguessed = await splitVerify(
        wholeRecord(bytes),
        trust,
        reader(() => undefined),
        none,
        { pieceBytes: 1 },
      );
      expect(unguessed.verification, "no guess").toEqual(want);
    });
  }

  it("checks a signature on this thread only when a worker's guess of key was wrong", async () => {
    const bytes = new Uint8Array(readFileSync(`${VECTORS}chains/verified_rotated_unpinned.aarl`));
    const right = await splitVerify(wholeRecord(bytes), {}, reader(), none, { pieceBytes: 1 });
    expect(right.checkedHere).toBe(0);
    const wrong = await splitVerify(
      wholeRecord(bytes),
      {},
      reader(() => "ab".repeat(32)),
      none,
      { pieceBytes: 1 },
    );
    expect(wrong.checkedHere).toBeGreaterThan(0);
    expect(wrong.verification).toEqual(right.verification);
  });

  it("a worker answers no more than a row for each 64 bytes of its piece: 4,096 of a piece of 256 KiB of rows `1`", async () => {
    const piece = new TextEncoder().encode("1\n".repeat(128 << 10));
    const answer = await readPiece(piece, MAX_ROW_BYTES, undefined, strict, Math.ceil(piece.length / 64));
    const rows = new PieceRows();
    rows.begin(answer, piece);
    expect(rows.length).toBe(4096);
    expect(answer.readTo).toBe(2 * 4096);
  });

  it("a row the walk stops at, before, at or after a worker's cut, in one piece or many: the sequential walk's verification", async () => {
    const rows = new TextDecoder()
      .decode(readFileSync(`${VECTORS}chains/verified_rotated_unpinned.aarl`))
      .trimEnd()
      .split("\n");
    for (const bad of ["1", "x", "{}", undefined]) {
      for (let at = 0; at <= rows.length; at++) {
        const text = `${[...rows.slice(0, at), ...(bad === undefined ? [] : [bad]), ...rows.slice(at)].join("\n")}\n`;
        const bytes = new TextEncoder().encode(text);
        const want = await verifyRecordBytes(bytes, {});
        if (bad === undefined) expect(want.verdict.status).toBe("verified");
        for (const [pieceBytes, bytesPerRow] of [
          [1 << 20, 1 << 20],
          [1 << 20, Math.ceil(bytes.length / 3)],
          [600, 1 << 20],
        ] as const) {
          const split = await splitVerify(wholeRecord(bytes), {}, reader(), none, { pieceBytes, bytesPerRow });
          expect(split.verification, `${String(bad)} at ${at}, pieces of ${pieceBytes}, a row for ${bytesPerRow} bytes`).toEqual(want);
        }
      }
    }
  });
});
