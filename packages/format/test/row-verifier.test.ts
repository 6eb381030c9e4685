import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { RecordReadError } from "../src/index.js";
import { RowVerifier, progressOf, walkRows } from "../src/verify/row-verifier.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { RowSplitter, type Row } from "../src/wire/row-splitter.js";
import { HerePool } from "./support/tuned.js";
import { readLines, reseal, tempDir, writeSession } from "./support/chains.js";
import { canonicalize } from "../src/wire/canonical.js";
import { LineHash } from "../src/wire/digest.js";
import type { JsonValue } from "../src/wire/json.js";

/**
 * The verifier over rows (row-verifier.ts), as every driver feeds it: what it reports of
 * progress, what it says when the reading fails, that it stops reading at the first
 * Tampered, and what it hands a caller that reads each row's value too (`readVerifying`).
 */
let path: string;
let record: Buffer;
let rows: Row[];

beforeAll(async () => {
  path = await writeSession(join(tempDir(), "rows.aarl"), { calls: 3 });
  record = readFileSync(path);
  const splitter = new RowSplitter();
  rows = [...splitter.push(record), ...splitter.end()];
});

const MiB = 1 << 20;

function* reads(...parts: (readonly Row[])[]): Generator<readonly Row[]> {
  yield* parts;
}

describe("progress", () => {
  it("is told every 4 MiB or so of bytes read, and not between", () => {
    const told: number[] = [];
    const progress = progressOf({ onProgress: (n) => told.push(n) });
    for (const n of [MiB, 4 * MiB - 1, 4 * MiB, 5 * MiB, 8 * MiB - 1, 8 * MiB, 20 * MiB]) progress(n);
    expect(told).toEqual([4 * MiB, 8 * MiB, 20 * MiB]);
    // No callback, nothing to tell.
    expect(() => progressOf({})(8 * MiB)).not.toThrow();
  });
});

describe("walking rows as a driver reads them", () => {
  it("says the record could not be read, naming it, when the reading fails, and closes the reading", async () => {
    let closed = false;
    async function* failing(): AsyncGenerator<readonly Row[]> {
      try {
        yield rows.slice(0, 2);
        throw new Error("the disk went away");
      } finally {
        closed = true;
      }
    }
    const walked = walkRows(failing(), "record.aarl", {}, undefined);
    await expect(walked).rejects.toBeInstanceOf(RecordReadError);
    await expect(walkRows(failing(), "record.aarl", {}, undefined)).rejects.toMatchObject({ name: "RecordReadError", path: "record.aarl" });
    await expect(walkRows(failing(), "record.aarl", {}, undefined)).rejects.toThrow("read record.aarl: the disk went away");
    expect(closed).toBe(true);
  });

  it("stops reading at the first Tampered, in the middle of a read or between reads", async () => {
    const bad: Row = { code: "row", number: 3, offset: 0, bytes: Buffer.from("1") };
    for (const split of [false, true]) {
      let reads = 0;
      let closed = false;
      function* reading(): Generator<readonly Row[]> {
        try {
          reads++;
          yield split ? [...rows.slice(0, 2), bad] : [...rows.slice(0, 2), bad, ...rows.slice(3)];
          reads++;
          yield rows.slice(3);
        } finally {
          closed = true;
        }
      }
      const v = await walkRows(reading(), "r", {}, undefined);
      expect(v.verdict).toMatchObject({ status: "tampered", reason: { code: "malformed_line", line: 3 } });
      expect([reads, closed], `split ${split}`).toEqual([1, true]);
    }
  });

  it("takes no rows from what a reading returns at its end, only from what it yields", async () => {
    function* returning(): Generator<readonly Row[], readonly Row[]> {
      yield rows;
      return [{ code: "row", number: rows.length + 1, offset: 0, bytes: Buffer.from("1") }];
    }
    expect(await walkRows(returning(), "r", {}, undefined)).toEqual(verifyChainBytes(record));
  });

  it("answers as the sequential walk, its checks on this thread or in a pool", async () => {
    const want = verifyChainBytes(record);
    expect(await walkRows(reads(rows), "r", {}, undefined)).toEqual(want);
    const pool = new HerePool(1);
    expect(
      await walkRows(reads(rows.slice(0, 4), rows.slice(4)), "r", {}, pool, {
        inline: 0,
        inlineWhenRunning: 0,
        eager: true,
        batch: 1,
        windowPerThread: 1,
      }),
    ).toEqual(want);
    expect(pool.checks).toBeGreaterThan(0);
  });
});

describe("the value of each row, for a caller that reads it too", () => {
  it("is the row's parsed value while the walk goes on, and nothing once it has stopped", () => {
    const verifier = new RowVerifier({}, undefined);
    for (const row of rows.slice(0, 3)) {
      // Without a pool there is never a wait.
      expect(verifier.step(row)).toBeUndefined();
      expect(verifier.lastValue).toEqual(row.code === "row" ? JSON.parse(Buffer.from(row.bytes).toString("utf8")) : undefined);
    }
    expect(verifier.step({ code: "row", number: 4, offset: 0, bytes: Buffer.from("[1]") })).toBeUndefined();
    expect(verifier.done).toBe(true);
    const next = rows[3];
    if (next === undefined) throw new Error("the record has a fourth row");
    expect(verifier.step(next)).toBeUndefined();
    expect(verifier.lastValue).toBeUndefined();
  });

  it("is nothing once a signature checked in the pool has failed, though the walk itself went on", async () => {
    // The first outcome signed with another Line's signature (well formed: only the curve
    // check, in the pool, finds it wrong), the Lines after it chained to it as it is.
    const lines = readLines(path);
    const bad = { ...lines[2], signature: lines[4]?.["signature"] };
    const text = canonicalize(bad as JsonValue);
    const rest = reseal([{ ...lines[3], prev_hash: LineHash.of(Buffer.from(text)) }, ...lines.slice(4)]);
    const broken = [...record.toString("utf8").split("\n").slice(0, 2), text, rest.trimEnd()];
    const splitter = new RowSplitter();
    const brokenRows = [...splitter.push(Buffer.from(`${broken.join("\n")}\n`)), ...splitter.end()];
    const verifier = new RowVerifier({}, new HerePool(1, 0, () => 0), { inline: 0, inlineWhenRunning: 0, eager: true, batch: 1, windowPerThread: 1 });
    let i = 0;
    while (!verifier.done && i < brokenRows.length) {
      const row = brokenRows[i++];
      if (row === undefined) break;
      const wait = verifier.step(row);
      if (wait !== undefined) await wait;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(verifier.done).toBe(true);
    expect(i).toBeLessThan(brokenRows.length);
    const after = brokenRows[i];
    if (after !== undefined) expect(verifier.step(after)).toBeUndefined();
    expect(verifier.lastValue).toBeUndefined();
    expect((await verifier.finish()).verdict).toMatchObject({ status: "tampered", reason: { code: "bad_signature" } });
  });
});
