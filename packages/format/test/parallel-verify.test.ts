import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordWriter, PrevHash, RequestDigest, SigningKey, type Verification, type VerifyOptions, type WalkedLine } from "../src/index.js";
import { verifyRecordFiles, type FileVerification, sealLine } from "../src/internal.js";
import { verifyChainFile } from "../src/verify/verify-record.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { verifyChainBytesParallel, verifyChainFileTuned } from "./support/tuned.js";
import { type Tuning } from "../src/verify/deferred-checks.js";
import { sharedPool } from "../src/verify/signature-pool.js";
import { manifestEntries } from "./support/manifest.js";
import { POLICY, outcome, tempDir } from "./support/chains.js";
import { vectorPath } from "./support/vectors.js";

/**
 * The parallel walk (signature checks on worker threads, the walk going on meanwhile) must
 * answer exactly as the sequential one: same verdict, reason, position, coverage, keys,
 * counts and head, and the same Lines told to `onLine`, never one past the break. Every
 * check here is sent to the threads (`inline: 0`) in tiny batches, so that batches finish
 * in any order and a failure can sit in any of them.
 */
const TUNINGS: readonly Tuning[] = [
  { inline: 0, inlineWhenRunning: 0, eager: true, batch: 1, windowPerThread: 1 },
  { inline: 0, inlineWhenRunning: 0, eager: true, batch: 3, windowPerThread: 2 },
  { inline: 2, inlineWhenRunning: 2, eager: true, batch: 2, windowPerThread: 4 },
  { inline: 1, inlineWhenRunning: 1, eager: false, batch: 2, windowPerThread: 2 },
];

interface Answer {
  readonly verification: Verification;
  readonly lines: readonly number[];
}

function sequential(bytes: Uint8Array, options: VerifyOptions = {}): Answer {
  const lines: number[] = [];
  const verification = verifyChainBytes(bytes, { ...options, onLine: (l: WalkedLine) => lines.push(l.line) });
  return { verification, lines };
}

async function parallel(bytes: Uint8Array, tuning: Tuning, threads: number, options: VerifyOptions = {}): Promise<Answer> {
  const lines: number[] = [];
  const verification = await verifyChainBytesParallel(bytes, { ...options, threads, onLine: (l: WalkedLine) => lines.push(l.line) }, tuning);
  return { verification, lines };
}

function aarlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? aarlFiles(join(dir, e.name)) : e.name.endsWith(".aarl") ? [join(dir, e.name)] : [],
  );
}

afterAll(async () => {
  for (const threads of [1, 2, 3]) await sharedPool(threads).close();
});

describe("the parallel walk answers as the sequential one", () => {
  const files = aarlFiles(vectorPath("."));

  it("finds the vectors' records", () => {
    expect(files.length).toBeGreaterThan(60);
  });

  it("on every record file under vectors/, unpinned", async () => {
    for (const file of files) {
      const bytes = readFileSync(file);
      const want = sequential(bytes);
      for (const tuning of TUNINGS) expect(await parallel(bytes, tuning, 2), `${file} ${JSON.stringify(tuning)}`).toEqual(want);
    }
  });

  it("on every chain vector, with its trust set", async () => {
    for (const entry of manifestEntries("chain")) {
      const trust = entry.input["trust"] as string[] | null;
      const options = trust === null ? {} : { trust };
      const bytes = readFileSync(vectorPath(String(entry.input["record"])));
      const want = sequential(bytes, options);
      for (const tuning of TUNINGS) expect(await parallel(bytes, tuning, 3, options), entry.id).toEqual(want);
    }
  });
});

describe("on generated chains broken at random positions", () => {
  let file: Buffer;
  let rows: Buffer[];

  beforeAll(async () => {
    // Three Sessions under two keys, so that a break can fall in any Session and batches
    // carry more than one key.
    const path = join(tempDir(), "sessions.aarl");
    const keys = [SigningKey.generate(), SigningKey.generate(), undefined];
    for (const key of keys) {
      const writer = await RecordWriter.open(path, { key: key ?? keys[0] ?? SigningKey.generate() });
      for (let i = 0; i < 12; i++) {
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

  const join_ = (parts: readonly Buffer[]): Buffer => Buffer.concat(parts.flatMap((r) => [r, Buffer.from("\n")]));

  /** One break: a byte altered, a signature's hex altered, a row removed or two swapped, or the file cut. */
  const breakArb = fc.oneof(
    fc.record({ kind: fc.constant("byte" as const), at: fc.nat(), delta: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant("signature" as const), row: fc.nat(), at: fc.nat({ max: 127 }) }),
    fc.record({ kind: fc.constant("remove" as const), row: fc.nat() }),
    fc.record({ kind: fc.constant("swap" as const), row: fc.nat() }),
    fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  );

  type Break = typeof breakArb extends fc.Arbitrary<infer T> ? T : never;

  function broken(b: Break): Buffer {
    switch (b.kind) {
      case "byte": {
        const out = Buffer.from(file);
        const at = b.at % out.length;
        out[at] = ((out[at] ?? 0) + b.delta) & 0xff;
        return out;
      }
      case "signature": {
        const signed = rows.filter((r) => r.includes('"signature":"'));
        const row = signed[b.row % signed.length] ?? Buffer.alloc(0);
        const at = row.indexOf('"signature":"') + 13 + b.at;
        const altered = Buffer.from(row);
        altered[at] = altered[at] === 0x30 ? 0x31 : 0x30;
        return join_(rows.map((r) => (r === row ? altered : r)));
      }
      case "remove":
        return join_(rows.filter((_, i) => i !== b.row % rows.length));
      case "swap": {
        const i = b.row % (rows.length - 1);
        const swapped = [...rows];
        [swapped[i], swapped[i + 1]] = [rows[i + 1] ?? Buffer.alloc(0), rows[i] ?? Buffer.alloc(0)];
        return join_(swapped);
      }
      case "cut":
        return file.subarray(0, b.at % file.length);
    }
  }

  it("the unbroken file verifies both ways", async () => {
    const want = sequential(file);
    expect(want.verification.verdict.status).toBe("verified");
    expect(await parallel(file, { inline: 0, inlineWhenRunning: 0, eager: true, batch: 2, windowPerThread: 2 }, 2)).toEqual(want);
  });

  it("[M8.9] verdict, reason, position, coverage, head and the Lines told are the same", async () => {
    await fc.assert(
      fc.asyncProperty(
        breakArb,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        async (b, threads, batch, windowPerThread) => {
          const bytes = broken(b);
          const want = sequential(bytes);
          expect(await parallel(bytes, { inline: 0, inlineWhenRunning: 0, eager: true, batch, windowPerThread }, threads)).toEqual(want);
          // No Line told: nothing held for onLine.
          const quiet = await verifyChainBytesParallel(bytes, { threads }, { inline: 0, inlineWhenRunning: 0, eager: true, batch, windowPerThread });
          expect(quiet).toEqual(want.verification);
        },
      ),
      { numRuns: 300 },
    );
    // Six hundred verifications, half on threads: seconds idle, more on a busy machine.
  }, 300_000);
});

describe("verifyRecordFiles", () => {
  it("answers each file as verifyChainFile does, in the order given, a missing file included, on threads or not", async () => {
    const files = aarlFiles(vectorPath("chains"));
    const paths = [...files.slice(0, 20), join(tempDir(), "missing.aarl"), ...files.slice(20)];
    const want: FileVerification[] = [];
    for (const path of paths) {
      try {
        want.push({ code: "checked", path, verification: await verifyChainFile(path, { threads: 0 }) });
      } catch {
        want.push({ code: "unreadable", path, detail: "No such file or directory (os error 2)" });
      }
    }
    for (const threads of [0, 1, 3]) {
      const got: FileVerification[] = [];
      for await (const answer of verifyRecordFiles(paths, { threads })) got.push(answer);
      expect(got, `threads ${threads}`).toEqual(want);
    }
  });
});

describe("from a file, Lines held for their signatures", () => {
  it("keep their canonical bytes though the reader's buffer has moved on", async () => {
    // Far more than one read (256 KiB) of rows, every check on the threads: Lines wait for
    // their signatures while later reads overwrite the buffer their rows came from.
    const path = join(tempDir(), "many-reads.aarl");
    const key = SigningKey.generate();
    const rows: string[] = [];
    let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
    rows.push(tail.text);
    for (let seq = 1; seq < 3000; seq++) {
      tail = sealLine({ ...outcome(`call-${seq}`), schema_version: 2, line_type: "outcome", seq, prev_hash: PrevHash.after(tail.lineHash) }, key);
      rows.push(tail.text);
    }
    writeFileSync(path, `${rows.join("\n")}\n`);
    const leaves = (into: string[]) => (l: WalkedLine) => {
      const c = l.canonical();
      into.push(typeof c === "string" ? c : Buffer.from(c).toString("utf8"));
    };
    const alone: string[] = [];
    const want = await verifyChainFile(path, { threads: 0, onLine: leaves(alone) });
    const held: string[] = [];
    const got = await verifyChainFileTuned(
      path,
      { threads: 2, onLine: leaves(held) },
      { inline: 0, inlineWhenRunning: 0, eager: true, batch: 64, windowPerThread: 4 },
    );
    expect(got).toEqual(want);
    expect(held).toEqual(alone);
    expect(held).toEqual(rows);
  });
});
