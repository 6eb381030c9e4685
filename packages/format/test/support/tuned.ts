import { MAX_ROW_BYTES, RowSplitter, type Row } from "../../src/wire/row-splitter.js";
import { readRowChunks } from "../../src/wire/row-file.js";
import type { Tuning } from "../../src/verify/deferred-checks.js";
import type { ByteSource } from "../../src/verify/piece-cutter.js";
import { progressOf, walkRows } from "../../src/verify/row-verifier.js";
import type { SplitTuning } from "../../src/verify/split-tuning.js";
import type { Verification } from "../../src/verify/verdict.js";
import { poolFor } from "../../src/verify/check-pool.js";
import { splitWalkOf } from "../../src/verify/split-file.js";
import { sharedRowPool } from "../../src/verify/row-pool.js";
import { readPiece, readPieceLater } from "../../src/verify/row-work.js";
import { checkNow } from "../../src/verify/signature-checker.js";
import type { PieceReader } from "../../src/verify/split-walk.js";
import type { VerifyOptions } from "../../src/verify/verify-options.js";

/**
 * The verifier's walks with their tuning set by a test: checks sent to the threads from the
 * first row, in many small batches, or a split walk whose pieces are cut anywhere. They live
 * with the tests, not in the package: no caller of the format tunes a walk.
 */

/** `verifyChainFile`, tuned: tests send a file's checks to the threads from the first. */
export async function verifyChainFileTuned(path: string, options: VerifyOptions, tuning: Tuning): Promise<Verification> {
  return walkRows(readRowChunks(path, options.maxRowBytes ?? MAX_ROW_BYTES, progressOf(options)), path, options, poolFor(options), tuning);
}

/**
 * `verifyChainBytes` through the parallel walk, tuned: tests set `inline` to 0 and a
 * small `batch`, so that a small record's checks go to the threads in many batches.
 */
export async function verifyChainBytesParallel(bytes: Uint8Array | string, options: VerifyOptions, tuning: Tuning): Promise<Verification> {
  const splitter = new RowSplitter(options.maxRowBytes ?? MAX_ROW_BYTES);
  const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  function* rows(): Generator<readonly Row[]> {
    yield [...splitter.push(buffer)];
    yield [...splitter.end()];
  }
  return walkRows(rows(), "bytes", options, poolFor(options), tuning);
}

/**
 * Who reads a test's pieces: that many of the row pool's threads (which run the built
 * `dist/`), or this thread, so that a mutant of the core's reading is reached: `here`
 * checks each signature now, `here-later` answers every other check later (as the page's
 * WebCrypto does), `failing` fails every other piece (the walking thread reads it again)
 * and checks no signature in the others (the walk's checker makes them).
 */
export type Readers = number | "here" | "here-later" | "failing";

/** Every kind of reader, for a test to run each. */
export const READERS: readonly Readers[] = [1, 2, 3, "here", "here-later", "failing"];

/** The piece reader `readers` names. */
export function readerOf(readers: Readers): PieceReader {
  if (typeof readers === "number") return sharedRowPool(readers);
  let count = 0;
  return {
    size: 2,
    read: async ({ bytes, length, limit, hint, budget }) => {
      const piece = new Uint8Array(bytes, 0, length);
      count++;
      switch (readers) {
        case "here":
          return { bytes, answer: readPiece(piece, limit, hint, budget, checkNow) };
        case "here-later": {
          const check = (claim: Parameters<typeof checkNow>[0], input: Parameters<typeof checkNow>[1]) => {
            const passed = checkNow(claim, input);
            return ++count % 2 === 0 ? passed : new Promise<boolean>((resolve) => setImmediate(() => resolve(passed)));
          };
          return { bytes, answer: await readPieceLater(piece, limit, hint, budget, check) };
        }
        case "failing":
          if (count % 2 === 1) throw new Error("the reader's heap ran out");
          return { bytes, answer: readPiece(piece, limit, hint, budget) };
      }
    },
  };
}

/** The split walk over bytes in memory, read `readBytes` at a time (tests: pieces cut anywhere). */
export async function verifySplitBytes(
  bytes: Uint8Array,
  options: VerifyOptions,
  threads: Readers,
  tuning: SplitTuning,
  readBytes: number,
): Promise<Verification> {
  const source = bytesSource(bytes, readBytes);
  return splitWalkOf(source, "bytes", options, readerOf(threads), tuning);
}

/** A record in memory, read `readBytes` at a time. */
export function bytesSource(bytes: Uint8Array, readBytes: number): ByteSource {
  let at = 0;
  return {
    read: (into) => {
      const n = Math.min(into.length, readBytes, bytes.length - at);
      into.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
    readAt: (into, position) => {
      const n = Math.min(into.length, bytes.length - position);
      into.set(bytes.subarray(position, position + n));
      return Promise.resolve(n);
    },
  };
}
