import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { fromCheckedHex, verifyRecordBytes, verifyStrict, verifyingKey } from "@aegis/format/browser";
import { wholeRecord, type RecordSource } from "../src/decode.js";
import { readPiece, type CheckOne } from "../src/piece-read.js";
import { splitVerify, type PieceReader } from "../src/split-walk.js";

/**
 * The page's split walk (issue 31, adr/0028) on this thread: the pieces read by the workers'
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
    read: async (bytes, length, limit, given) => ({ answer: await readPiece(new Uint8Array(bytes, 0, length), limit, hint(given), mixed), bytes }),
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
});
