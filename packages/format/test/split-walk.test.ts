import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordReadError, RecordWriter, RequestDigest, SigningKey, type Verification, type VerifyOptions, type WalkedLine } from "../src/index.js";
import { READERS, bytesSource, readerOf, verifySplitBytes, type Readers } from "./support/tuned.js";
import { PieceCutter } from "../src/verify/piece-cutter.js";
import { walkPieces, type PieceReader, type PieceSource, type PieceToRead } from "../src/verify/split-walk.js";
import { windowOf, type SplitTuning } from "../src/verify/split-tuning.js";
import { sharedRowPool } from "../src/verify/row-pool.js";
import { manifestEntries } from "./support/manifest.js";
import { POLICY, outcome, readLines, reseal, tempDir, writeSession } from "./support/chains.js";
import { vectorPath } from "./support/vectors.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { LINKED_MEMBERS } from "../src/verify/piece-answer.js";
import { canonicalize } from "../src/wire/canonical.js";
import type { JsonValue } from "../src/wire/json.js";

/**
 * The split walk (ADR 0027: rows split, parsed, hashed and their signatures checked on worker
 * threads, linked in order on the calling thread) must answer exactly as the sequential
 * walk: same verdict, reason, position, coverage, keys, counts and head, and the same Lines
 * told to `onLine`. Pieces here are a row or two (a small row bound makes them small), and
 * reads stop at odd sizes, so that a Session's `open` and its Lines fall in different
 * pieces and threads, and the reader's guess of a piece's key is put to work. With `onLine`,
 * a thread answers one row of each piece and the calling thread reads the rest (the row
 * budget of ADR 0027, point 7); without, the default budget.
 */
interface Answer {
  readonly verification: Verification;
  readonly lines: readonly number[];
}

function sequential(bytes: Uint8Array, options: VerifyOptions = {}): Answer {
  const lines: number[] = [];
  const verification = verifyChainBytes(bytes, { ...options, onLine: (l: WalkedLine) => lines.push(l.line) });
  return { verification, lines };
}

async function split(bytes: Uint8Array, threads: Readers, readBytes: number, options: VerifyOptions = {}): Promise<Answer> {
  const lines: number[] = [];
  const verification = await verifySplitBytes(
    bytes,
    { ...options, onLine: (l: WalkedLine) => lines.push(l.line) },
    threads,
    { pieceBytes: 1, budgetBytes: 1 << 16, bytesPerRow: 1 << 20 },
    readBytes,
  );
  return { verification, lines };
}

/** Without `onLine`: the walk reads only the members the workers sent. */
async function quiet(bytes: Uint8Array, threads: Readers, readBytes: number, options: VerifyOptions = {}): Promise<Verification> {
  return verifySplitBytes(bytes, options, threads, { pieceBytes: 1, budgetBytes: 1 << 16, bytesPerRow: 64 }, readBytes);
}

function aarlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? aarlFiles(join(dir, e.name)) : e.name.endsWith(".aarl") ? [join(dir, e.name)] : [],
  );
}

afterAll(async () => {
  for (const threads of [1, 2, 3]) await sharedRowPool(threads).close();
});

describe("the split walk answers as the sequential one", () => {
  const files = aarlFiles(vectorPath("."));

  it("on every record file under vectors/, unpinned, at several row bounds", async () => {
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) {
      const bytes = readFileSync(file);
      // 2048: pieces of a row or two; 200: rows over the bound, followed to their end by the reader.
      for (const maxRowBytes of [2048, 200]) {
        const want = sequential(bytes, { maxRowBytes });
        expect(await split(bytes, 2, 777, { maxRowBytes }), `${file} ${maxRowBytes}`).toEqual(want);
        expect(await split(bytes, "here", 777, { maxRowBytes }), `${file} ${maxRowBytes} here`).toEqual(want);
        expect(await quiet(bytes, 1, 4096, { maxRowBytes }), `${file} ${maxRowBytes}`).toEqual(want.verification);
      }
    }
  });

  it("on every chain vector, with its trust set", async () => {
    for (const entry of manifestEntries("chain")) {
      const trust = entry.input["trust"] as string[] | null;
      const options = { ...(trust === null ? {} : { trust }), maxRowBytes: 2048 };
      const bytes = readFileSync(vectorPath(String(entry.input["record"])));
      const want = sequential(bytes, options);
      expect(await split(bytes, 3, 1000, options), entry.id).toEqual(want);
      expect(await split(bytes, "here-later", 1000, options), `${entry.id} here-later`).toEqual(want);
      expect(await quiet(bytes, "failing", 1000, options), `${entry.id} failing`).toEqual(want.verification);
      expect(await quiet(bytes, 3, 1000, options), entry.id).toEqual(want.verification);
    }
  });
});

describe("on generated records broken at random positions", () => {
  let file: Buffer;
  let rows: Buffer[];

  beforeAll(async () => {
    // Three Sessions under two keys: a break can fall in any Session, and pieces carry more than one key.
    const path = join(tempDir(), "sessions.aarl");
    const first = SigningKey.generate();
    for (const key of [first, SigningKey.generate(), first]) {
      const writer = await RecordWriter.open(path, { key });
      for (let i = 0; i < 10; i++) {
        const id = `call-${i}`;
        await writer.intent({ call_id: id, tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from(`request ${id}`)), policy_set_hash: POLICY });
        await writer.outcome(outcome(id));
      }
      await writer.close();
    }
    file = readFileSync(path);
    rows = file
      .toString("utf8")
      .split("\n")
      .filter((r) => r.length > 0)
      .map((r) => Buffer.from(r));
  });

  it("each piece's reader guesses its Session's key: no signature is checked again on the walking thread", async () => {
    const want = sequential(file).verification;
    // Pieces of a row, of a few, of the whole record; the thread answering one row a piece,
    // the rest read here from where it stopped, under the key it had reached.
    for (const [pieceBytes, bytesPerRow] of [
      [1, 64],
      [600, 64],
      [1 << 16, 64],
      [1 << 16, 1 << 20],
    ] as const) {
      for (const readBytes of [333, 1 << 16]) {
        const cutter = new PieceCutter(bytesSource(file, readBytes), pieceBytes, 2048, () => undefined);
        const source = { next: () => cutter.next(), give: (b: ArrayBuffer) => cutter.give(b), reread: () => Promise.reject(new Error("no reader fails")) };
        const tuning = { pieceBytes, budgetBytes: 1 << 16, bytesPerRow };
        const walked = await walkPieces({ source, reader: readerOf("here"), name: "bytes", limit: 2048, tuning }, {});
        expect(walked.verification, `${pieceBytes} ${bytesPerRow} ${readBytes}`).toEqual(want);
        expect(walked.checkedHere, `${pieceBytes} ${bytesPerRow} ${readBytes}`).toBe(0);
      }
    }
  });

  const joined = (parts: readonly Buffer[]): Buffer => Buffer.concat(parts.flatMap((r) => [r, Buffer.from("\n")]));

  const breakArb = fc.oneof(
    fc.record({ kind: fc.constant("byte" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ kind: fc.constant("signature" as const), row: fc.nat(), at: fc.integer({ min: 0, max: 127 }) }),
    fc.record({ kind: fc.constant("remove" as const), row: fc.nat() }),
    fc.record({ kind: fc.constant("swap" as const), row: fc.nat() }),
    fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  );
  type Break = typeof breakArb extends fc.Arbitrary<infer T> ? T : never;

  function broken(b: Break): Buffer {
    switch (b.kind) {
      case "byte": {
        const altered = Buffer.from(file);
        altered[b.at % file.length] = b.value;
        return altered;
      }
      case "signature": {
        const signed = rows.filter((r) => r.includes('"signature":"'));
        const row = signed[b.row % signed.length] ?? Buffer.alloc(0);
        const at = row.indexOf('"signature":"') + 13 + b.at;
        const altered = Buffer.from(row);
        altered[at] = altered[at] === 0x30 ? 0x31 : 0x30;
        return joined(rows.map((r) => (r === row ? altered : r)));
      }
      case "remove":
        return joined(rows.filter((_, i) => i !== b.row % rows.length));
      case "swap": {
        const i = b.row % (rows.length - 1);
        const swapped = [...rows];
        [swapped[i], swapped[i + 1]] = [rows[i + 1] ?? Buffer.alloc(0), rows[i] ?? Buffer.alloc(0)];
        return joined(swapped);
      }
      case "cut":
        return file.subarray(0, b.at % file.length);
    }
  }

  it("the unbroken record verifies both ways", async () => {
    const want = sequential(file);
    expect(want.verification.verdict.status).toBe("verified");
    for (const readers of READERS) expect(await split(file, readers, 333), String(readers)).toEqual(want);
  });

  it("[M8.9] verdict, reason, position, coverage, head and the Lines told are the same", async () => {
    await fc.assert(
      fc.asyncProperty(breakArb, fc.constantFrom(...READERS), fc.integer({ min: 1, max: 5000 }), async (b, threads, readBytes) => {
        const bytes = broken(b);
        const want = sequential(bytes, { maxRowBytes: 2048 });
        expect(await split(bytes, threads, readBytes, { maxRowBytes: 2048 })).toEqual(want);
        expect(await quiet(bytes, threads, readBytes, { maxRowBytes: 2048 })).toEqual(want.verification);
      }),
      { numRuns: 200 },
    );
  }, 300_000);
});

describe("a member the walk reads, of every kind of value, on every row", () => {
  // What a thread sends of a member is its kind as much as its value (piece-answer.ts): a
  // string, a number, a stand-in for one, or nothing; the walk must be given what the row holds.
  // Absent, neither a string nor a number (null is never canonical), a number, a string.
  const VALUES: readonly (JsonValue | undefined)[] = [undefined, true, 3, "x"];
  let lines: Record<string, unknown>[] = [];
  let rows: string[] = [];

  beforeAll(async () => {
    const path = await writeSession(join(tempDir(), "members.aarl"), { calls: 2 });
    lines = readLines(path);
    rows = readFileSync(path, "utf8").trimEnd().split("\n");
  });

  const set = (line: Record<string, unknown>, name: string, value: JsonValue | undefined): Record<string, unknown> => {
    const out = { ...line };
    if (value === undefined) delete out[name];
    else out[name] = value;
    return out;
  };

  it("resealed after the change, or changed after the seal: the split walk answers as the sequential one, read whole or a row a piece", async () => {
    let records = 0;
    // A Line of each type: open, intent, outcome, a parked outcome, decision, close.
    const each = [0, 1, 2, 5, 6, 7];
    for (const i of each) {
      for (const name of LINKED_MEMBERS) {
        for (const value of VALUES) {
          const line = lines[i] ?? {};
          const resealed = reseal(lines.map((l, j) => (j === i ? set(l, name, value) : l)));
          const edited = rows.map((r, j) => (j === i ? canonicalize(set(line, name, value) as JsonValue) : r)).join("\n") + "\n";
          for (const text of [resealed, edited]) {
            const bytes = Buffer.from(text);
            const want = sequential(bytes);
            const at = `row ${i} ${name} ${JSON.stringify(value)}`;
            const walked: number[] = [];
            const whole = { pieceBytes: 1 << 16, budgetBytes: 1 << 16, bytesPerRow: 1 << 20 };
            const verification = await verifySplitBytes(bytes, { onLine: (l: WalkedLine) => walked.push(l.line) }, "here", whole, 1 << 16);
            expect({ verification, lines: walked }, at).toEqual(want);
            expect(await verifySplitBytes(bytes, {}, "here", { ...whole, bytesPerRow: 64 }, 1 << 16), at).toEqual(want.verification);
            expect(await verifySplitBytes(bytes, {}, "here", { pieceBytes: 1, budgetBytes: 1 << 16, bytesPerRow: 64 }, 1 << 16), at).toEqual(want.verification);
            records++;
          }
        }
      }
    }
    expect(records).toBe(each.length * LINKED_MEMBERS.length * VALUES.length * 2);
  }, 120_000);
});

describe("the piece driver", () => {
  let file: Buffer;

  beforeAll(async () => {
    file = readFileSync(await writeSession(join(tempDir(), "driver.aarl"), { calls: 20 }));
  });

  function sourceOf(bytes: Buffer, pieceBytes: number, fail?: { next?: Error; reread?: Error }): PieceSource {
    const cutter = new PieceCutter(bytesSource(bytes, 1 << 16), pieceBytes, 2048, () => undefined);
    return {
      next: () => (fail?.next === undefined ? cutter.next() : Promise.reject(fail.next)),
      give: (b) => cutter.give(b),
      reread: () => Promise.reject(fail?.reread ?? new Error("no reader fails")),
    };
  }

  /** A reader on this thread that answers after a few turns, and records what it was asked. */
  class Recording implements PieceReader {
    readonly asked: PieceToRead[] = [];
    out = 0;
    mostOut = 0;
    private readonly inner = readerOf("here");
    constructor(
      readonly size: number,
      private readonly failing = false,
    ) {}
    async read(piece: PieceToRead): ReturnType<PieceReader["read"]> {
      this.asked.push({ ...piece });
      this.mostOut = Math.max(this.mostOut, ++this.out);
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      this.out--;
      if (this.failing) throw new Error("the reader's heap ran out");
      return this.inner.read(piece);
    }
  }

  const walk = (source: PieceSource, reader: PieceReader, tuning?: SplitTuning, between?: (walked: number) => Promise<void>) =>
    walkPieces(
      { source, reader, name: "record.aarl", limit: 2048, ...(tuning === undefined ? {} : { tuning }), ...(between === undefined ? {} : { between }) },
      {},
    );

  it("asks each reader for the rows of its budget, and has at most the window of pieces out", async () => {
    const want = verifyChainBytes(file);
    for (const size of [1, 3]) {
      const tuning = { pieceBytes: 200, budgetBytes: 1000, bytesPerRow: 50 };
      const reader = new Recording(size);
      expect((await walk(sourceOf(file, 200), reader, tuning)).verification).toEqual(want);
      expect(reader.asked.every((p) => p.budget === Math.ceil(p.length / 50) && p.limit === 2048)).toBe(true);
      expect(reader.mostOut, `${size} readers`).toBe(windowOf(tuning, size));
    }
    // Untuned: the defaults.
    const untuned = new Recording(2);
    expect((await walk(sourceOf(file, 1 << 18), untuned)).verification).toEqual(want);
    expect(untuned.asked.map((p) => p.budget)).toEqual([Math.ceil(file.length / 64)]);
  });

  it("tells `between` the bytes walked after each piece, the whole record's last", async () => {
    const walked: number[] = [];
    await walk(sourceOf(file, 300), new Recording(2), { pieceBytes: 300, budgetBytes: 1 << 16, bytesPerRow: 64 }, (n) => {
      walked.push(n);
      return Promise.resolve();
    });
    expect(walked.length).toBeGreaterThan(5);
    expect(walked.every((n, i) => i === 0 || n > (walked[i - 1] ?? 0))).toBe(true);
    expect(walked.at(-1)).toBe(file.length);
  });

  it("reads no more pieces once the walk has stopped", async () => {
    const rows = file.toString("utf8").split("\n");
    const broken = Buffer.from([rows[0], "1", ...rows.slice(1)].join("\n"));
    const tuning = { pieceBytes: 100, budgetBytes: 300, bytesPerRow: 64 };
    const reader = new Recording(1);
    const walked = await walk(sourceOf(broken, 100), reader, tuning);
    expect(walked.verification.verdict).toMatchObject({ status: "tampered", reason: { code: "malformed_line", line: 2 } });
    expect(reader.asked.length).toBeLessThanOrEqual(windowOf(tuning, 1) + 1);
  });

  it("says the record could not be read when its source fails, or a piece a reader failed on cannot be read again", async () => {
    const gone = new Error("the disk went away");
    await expect(walk(sourceOf(file, 300, { next: gone }), new Recording(1))).rejects.toThrow(new RecordReadError("record.aarl", gone));
    const changed = new Error("the record changed");
    const failed = walk(sourceOf(file, 300, { reread: changed }), new Recording(1, true));
    await expect(failed).rejects.toBeInstanceOf(RecordReadError);
    await expect(walk(sourceOf(file, 300, { reread: changed }), new Recording(1, true))).rejects.toThrow("read record.aarl: the record changed");
  });
});
