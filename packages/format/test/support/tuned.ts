import { MAX_ROW_BYTES, RowSplitter, type Row } from "../../src/wire/row-splitter.js";
import { readRowChunks } from "../../src/wire/row-file.js";
import type { CheckPool, Tuning } from "../../src/verify/deferred-checks.js";
import { checksOf, type SignatureBatch } from "../../src/verify/signature-batch.js";
import { verifyStrict, verifyingKey } from "../../src/crypto/ed25519.js";
import { fromCheckedHex } from "../../src/wire/hex.js";
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
export async function verifyChainBytesParallel(
  bytes: Uint8Array | string,
  options: VerifyOptions,
  tuning: Tuning,
  pool = poolFor(options),
): Promise<Verification> {
  const splitter = new RowSplitter(options.maxRowBytes ?? MAX_ROW_BYTES);
  const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  function* rows(): Generator<readonly Row[]> {
    yield [...splitter.push(buffer)];
    yield [...splitter.end()];
  }
  return walkRows(rows(), "bytes", options, pool, tuning);
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

/**
 * A check pool on the test's thread, so that a mutant of the deferred checks is reached and
 * the order of answers is the test's: each batch is checked at once, and answered after
 * `delay(n)` turns of the event loop for the n-th batch sent (by default, later batches often
 * first). It is ready once `start` has been called `readyAfter` times; it counts what it is
 * asked.
 */
export class HerePool implements CheckPool {
  started = 0;
  batches = 0;
  checks = 0;
  out = 0;
  mostOut = 0;
  /** Each check's message, as UTF-8 text. */
  readonly messages: string[] = [];

  constructor(
    readonly size: number,
    private readonly readyAfter = 0,
    private readonly delay: (n: number) => number = (n) => 3 - (n % 3),
    private readonly failWith?: Error,
  ) {}

  get ready(): boolean {
    return this.started >= this.readyAfter;
  }

  start(): void {
    this.started++;
  }

  async check(batch: SignatureBatch): Promise<number> {
    const n = this.batches++;
    this.mostOut = Math.max(this.mostOut, ++this.out);
    let failed = -1;
    let i = 0;
    for (const { key, message, signature } of checksOf(batch.encode())) {
      this.checks++;
      this.messages.push(Buffer.from(message).toString("utf8"));
      const point = verifyingKey(fromCheckedHex(key));
      if (failed === -1 && (typeof point === "string" || !verifyStrict(point, message, signature))) failed = i;
      i++;
    }
    for (let turn = 0; turn < this.delay(n); turn++) await new Promise((resolve) => setImmediate(resolve));
    this.out--;
    if (this.failWith !== undefined) throw this.failWith;
    return failed;
  }
}
