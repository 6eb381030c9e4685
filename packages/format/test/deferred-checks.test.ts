import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Verification, WalkedLine } from "../src/index.js";
import { DEFAULT_TUNING, tuningFor, type Tuning } from "../src/verify/deferred-checks.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { HerePool, verifyChainBytesParallel } from "./support/tuned.js";
import { tempDir, writeSession } from "./support/chains.js";

/**
 * The parallel walk's checker (deferred-checks.ts) with a pool on this thread: how many
 * checks it makes now and how many it sends, in what batches, how many batches it has out at
 * once, and what it answers when batches answer out of order or the pool fails. The answer is
 * always the sequential walk's, and no Line past a failed signature is told.
 */
interface Answer {
  readonly verification: Verification;
  readonly lines: readonly number[];
}

let record: Buffer;
/** The signed Lines of `record`: open, ten outcomes, a parked outcome, its decision, close. */
const SIGNED = 14;

beforeAll(async () => {
  record = readFileSync(await writeSession(join(tempDir(), "deferred.aarl"), { calls: 10 }));
});

function sequential(bytes: Uint8Array): Answer {
  const lines: number[] = [];
  return { verification: verifyChainBytes(bytes, { onLine: (l: WalkedLine) => lines.push(l.line) }), lines };
}

async function deferred(bytes: Uint8Array, tuning: Tuning, pool: HerePool): Promise<Answer> {
  const lines: number[] = [];
  const verification = await verifyChainBytesParallel(bytes, { onLine: (l: WalkedLine) => lines.push(l.line) }, tuning, pool);
  return { verification, lines };
}

const tuning = (t: Partial<Tuning>): Tuning => ({ inline: 0, inlineWhenRunning: 0, eager: true, batch: 1, windowPerThread: 1, ...t });

describe("the deferred checks", () => {
  it("check the first `inline` signatures now, or `inlineWhenRunning` once the threads run, and send the rest in batches of `batch`", async () => {
    const t = tuning({ inline: 5, inlineWhenRunning: 2, batch: 3, windowPerThread: 2 });
    const starting = new HerePool(2, 1);
    expect(await deferred(record, t, starting)).toEqual(sequential(record));
    expect([starting.checks, starting.batches]).toEqual([SIGNED - 5, 3]);
    const running = new HerePool(2);
    expect(await deferred(record, t, running)).toEqual(sequential(record));
    expect([running.checks, running.batches]).toEqual([SIGNED - 2, 4]);
    // A threshold over the record's signatures: all checked now, though the threads run.
    const few = new HerePool(2);
    await deferred(record, tuning({ inline: 100, inlineWhenRunning: 100 }), few);
    expect([few.checks, few.started]).toEqual([0, 0]);
  });

  it("check now while the threads start, unless told to wait for them (eager), and send once they are ready", async () => {
    const waiting = new HerePool(2, 3);
    expect(await deferred(record, tuning({ inline: 2, eager: false }), waiting)).toEqual(sequential(record));
    // Checks 3 and 4 start the threads and are made now; from the fifth, sent.
    expect([waiting.started, waiting.checks]).toEqual([3, SIGNED - 4]);
    const never = new HerePool(2, Infinity);
    await deferred(record, tuning({ inline: 2, eager: false }), never);
    expect([never.started, never.checks]).toEqual([SIGNED - 2, 0]);
    const eager = new HerePool(2, Infinity);
    await deferred(record, tuning({ inline: 2, eager: true }), eager);
    expect([eager.started, eager.checks]).toEqual([1, SIGNED - 2]);
  });

  it("have at most `windowPerThread` batches out per thread", async () => {
    for (const [size, windowPerThread] of [
      [1, 1],
      [2, 2],
      [3, 1],
    ] as const) {
      const pool = new HerePool(size, 0, () => 5);
      expect(await deferred(record, tuning({ windowPerThread }), pool)).toEqual(sequential(record));
      expect(pool.mostOut, `${size} threads, ${windowPerThread} a thread`).toBe(size * windowPerThread);
    }
    const none = new HerePool(2, 0, () => 5);
    await deferred(record, tuning({ windowPerThread: 0 }), none);
    expect(none.mostOut).toBe(1);
  });

  it("answer the first signature that fails, though a later batch's failure is answered first", async () => {
    const rows = record.toString("utf8").trimEnd().split("\n");
    // Break the signatures of the 4th and 12th signed Lines.
    const signed = rows.flatMap((r, i) => (r.includes('"signature":"') ? [i] : []));
    const bad = (row: string): string => row.replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === "0" ? "1" : "0"}`);
    const broken = Buffer.from(`${rows.map((r, i) => (i === signed[3] || i === signed[11] ? bad(r) : r)).join("\n")}\n`);
    const want = sequential(broken);
    expect(want.verification.verdict.status).toBe("tampered");
    for (const delay of [(n: number) => 20 - n, (n: number) => n, () => 0]) {
      for (const batch of [1, 2, 5]) {
        const pool = new HerePool(2, 0, delay);
        expect(await deferred(broken, tuning({ batch, windowPerThread: 4 }), pool), `batch ${batch}`).toEqual(want);
      }
    }
  });

  it("fail with the pool's error when a batch could not be checked", async () => {
    const error = new Error("a thread died");
    await expect(deferred(record, tuning({}), new HerePool(2, 0, () => 1, error))).rejects.toBe(error);
  });
});

describe("the tuning of a record of known size", () => {
  it("starts the threads at once for a record of 16 MiB or more", () => {
    expect(tuningFor(undefined)).toEqual(DEFAULT_TUNING);
    expect(tuningFor((16 << 20) - 1)).toEqual(DEFAULT_TUNING);
    expect(tuningFor(16 << 20)).toEqual({ ...DEFAULT_TUNING, inline: DEFAULT_TUNING.inlineWhenRunning });
  });
});
