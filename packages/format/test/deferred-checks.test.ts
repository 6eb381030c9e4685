import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Verification, WalkedLine } from "../src/index.js";
import { DEFAULT_TUNING, DeferredChecks, tuningFor, type Tuning } from "../src/verify/deferred-checks.js";
import type { SignatureStop } from "../src/verify/signature-checker.js";
import { verifyingKey } from "../src/crypto/ed25519.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { HerePool, verifyChainBytesParallel } from "./support/tuned.js";
import { DEV, readLines, reseal, tempDir, writeSession } from "./support/chains.js";

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

describe("a check sent to the pool", () => {
  it("carries a row's bytes less its cut, never decoded, or the signing input's text when there is no cut", async () => {
    const key = verifyingKey(DEV.publicKey);
    if (typeof key === "string") throw new Error("the key is a point");
    const pool = new HerePool(1);
    const checks = new DeferredChecks(pool, undefined, tuning({ batch: 10 }));
    const stop = (): SignatureStop => ({
      at: { session_index: 0, seq: 0 },
      rows: 0,
      sessions: 0,
      keyIds: 0,
      coverage: undefined,
      head: undefined,
      unfinished: { count: 0, listed: 0 },
    });
    const claim = { code: "check", key, signature: "00".repeat(64) } as const;
    const never = (): string => {
      throw new Error("a row with a cut is never decoded");
    };
    expect(checks.check(claim, { text: never, row: Buffer.from("abcXYZdef"), cut: { start: 3, end: 6 } }, stop)).toBe(true);
    expect(checks.check(claim, { text: () => "the text", row: Buffer.from("é"), cut: undefined }, stop)).toBe(true);
    expect(checks.check(claim, { text: () => "no row", row: undefined, cut: { start: 0, end: 1 } }, stop)).toBe(true);
    await checks.finish();
    expect(pool.messages).toEqual(["abcdef", "the text", "no row"]);
    // Without an onLine, a Line is told to nobody.
    expect(() => checks.line(undefined as never)).not.toThrow();
    expect(checks.failure).toEqual(stop());
  });
});

describe("Lines held for their signatures", () => {
  it("are told as they were read, a row that is not canonical and a row that is not ASCII included", async () => {
    const path = await writeSession(join(tempDir(), "spaced.aarl"), { calls: 4 });
    // Spacing a row leaves its Line (its hash and signature are of the canonical form); a
    // call_id of "é" makes its signing input text, not a cut of the row's bytes.
    const rows = readFileSync(path, "utf8").trimEnd().split("\n");
    const lines = readLines(path).map((l) => (l["call_id"] === "call-1" ? { ...l, call_id: "\u00e9" } : l));
    const resealed = reseal(lines).trimEnd().split("\n");
    expect(resealed).toHaveLength(rows.length);
    const text = `${resealed.map((r, i) => (i % 2 === 0 ? r.replace(/^\{/, "{ ") : r)).join("\n")}\n`;
    const bytes = Buffer.from(text);
    const told = (into: string[]) => (l: WalkedLine) => {
      const c = l.canonical();
      into.push(`${l.line} ${typeof c === "string" ? c : Buffer.from(c).toString("utf8")}`);
    };
    const want: string[] = [];
    const verification = verifyChainBytes(bytes, { onLine: told(want) });
    expect(verification.verdict.status).toBe("verified");
    const got: string[] = [];
    const pool = new HerePool(2, 0, () => 4);
    expect(await verifyChainBytesParallel(bytes, { onLine: told(got) }, tuning({ batch: 3, windowPerThread: 2 }), pool)).toEqual(verification);
    expect(got).toEqual(want);
    expect(pool.checks).toBeGreaterThan(0);
  });
});

describe("the tuning of a record of known size", () => {
  it("starts the threads at once for a record of 16 MiB or more", () => {
    expect(tuningFor(undefined)).toEqual(DEFAULT_TUNING);
    expect(tuningFor((16 << 20) - 1)).toEqual(DEFAULT_TUNING);
    expect(tuningFor(16 << 20)).toEqual({ ...DEFAULT_TUNING, inline: DEFAULT_TUNING.inlineWhenRunning });
  });
});
