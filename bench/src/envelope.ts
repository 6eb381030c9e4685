import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvelopeStore, checkEnvelope, openEnvelope, type EntryDigest } from "@aegis/envelope";
import { fmt, median } from "./measure.js";

/**
 * `node bench/dist/envelope.js [--entries N] [--sequential N] [--size BYTES]`: the Envelope
 * store with N values of 1 KiB (default 100,000). Put throughput one at a time (each put
 * awaited, so each pays its own fsync) and with 64 concurrent writers (group commit), get
 * latency over a warm page cache, open time with and without indexes, and the files the
 * store made. Each figure is printed beside the cost of the primitive that bounds it.
 */
const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} wants a positive integer`);
  return value;
};
const ENTRIES = argValue("--entries", 100_000);
const SEQUENTIAL = Math.min(ENTRIES, argValue("--sequential", 10_000));
const SIZE = argValue("--size", 1024);
const WRITERS = 64;
const GETS = Math.min(ENTRIES, 20_000);

const dir = mkdtempSync(join(tmpdir(), "aegis-envelope-bench-"));
const seconds = (since: bigint): number => Number(process.hrtime.bigint() - since) / 1e9;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const rate = (count: number, s: number, bytes: number): string =>
  `${Math.round(count / s).toLocaleString("en-US")} entries/s, ${(bytes / 1e6 / s).toFixed(1)} MB/s`;

/** Distinct values: a counter in the first bytes of a random block, so none dedups. */
const block = randomBytes(SIZE);
function value(i: number): Uint8Array {
  const bytes = Buffer.from(block);
  bytes.writeUInt32BE(i, 0);
  bytes.writeUInt32BE(Math.floor(i / 2 ** 32), 4);
  return bytes;
}

function fsyncCost(n: number): number {
  const path = join(dir, "fsync.bin");
  const fd = openSync(path, "a");
  const frame = Buffer.alloc(SIZE + 56);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    writeSync(fd, frame);
    fsyncSync(fd);
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  closeSync(fd);
  rmSync(path);
  return median(samples);
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function filesIn(path: string): { count: number; bytes: number } {
  const names = readdirSync(path);
  return { count: names.length, bytes: names.reduce((n, name) => n + statSync(join(path, name)).size, 0) };
}

const fsync = fsyncCost(300);
console.log(`aegis envelope bench (node ${process.version}, ${new Date().toISOString().slice(0, 10)})`);
console.log(`  ${ENTRIES.toLocaleString("en-US")} entries of ${SIZE} bytes; write + fsync of one frame, median this run: ${fmt(fsync)}`);
console.log("");

// Sequential puts: one at a time, each awaited, so each is one write and one fsync. Each
// is followed by a raw write + fsync of a frame's size on a file beside it, so the ratio
// compares like with like under the disk's conditions of the moment.
console.log("put");
{
  const store = await EnvelopeStore.open(join(dir, "sequential"));
  const side = openSync(join(dir, "side.bin"), "a");
  const frame = Buffer.alloc(SIZE + 56);
  const puts: number[] = [];
  const raw: number[] = [];
  let total = 0;
  for (let i = 0; i < SEQUENTIAL; i++) {
    let t = process.hrtime.bigint();
    await store.putRequest(value(i));
    const us = Number(process.hrtime.bigint() - t) / 1000;
    puts.push(us);
    total += us;
    t = process.hrtime.bigint();
    writeSync(side, frame);
    fsyncSync(side);
    raw.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  await store.close();
  closeSync(side);
  const s = total / 1e6;
  console.log(`  sequential, each put awaited, ${SEQUENTIAL.toLocaleString("en-US")} puts: ${rate(SEQUENTIAL, s, SEQUENTIAL * SIZE)} (time in put only)`);
  console.log(
    `    median ${fmt(median(puts))}/put against ${fmt(median(raw))} for a raw write + fsync interleaved: ${(median(puts) / median(raw)).toFixed(2)}x`,
  );
  rmSync(join(dir, "sequential"), { recursive: true });
  rmSync(join(dir, "side.bin"));
}

// Concurrent puts: 64 writers, each awaiting its put before the next; the store under test.
const storePath = join(dir, "store");
const digests: EntryDigest[] = new Array<EntryDigest>(ENTRIES);
{
  const store = await EnvelopeStore.open(storePath);
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < ENTRIES) {
        const i = next++;
        digests[i] = await store.putRequest(value(i));
      }
    }),
  );
  const s = seconds(started);
  const closing = process.hrtime.bigint();
  await store.close();
  console.log(`  ${WRITERS} concurrent writers, ${ENTRIES.toLocaleString("en-US")} puts: ${rate(ENTRIES, s, ENTRIES * SIZE)} (${s.toFixed(2)} s)`);
  console.log(`    ${fmt((s * 1e6) / ENTRIES)}/put; close (writes the last index): ${(seconds(closing) * 1000).toFixed(0)} ms`);
}
const files = filesIn(storePath);
console.log(`  files the store made: ${files.count} (${mb(files.bytes)} on disk for ${mb(ENTRIES * SIZE)} of values)`);
console.log("");

// Open: read-only and for writing, from the indexes; then with the indexes removed (a scan).
console.log("open");
{
  const rounds = (open: () => Promise<{ close(): Promise<void> }>): Promise<number[]> =>
    (async () => {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = process.hrtime.bigint();
        const source = await open();
        times.push(seconds(t) * 1000);
        await source.close();
      }
      return times;
    })();
  const reader = await rounds(() => openEnvelope(storePath));
  const writer = await rounds(() => EnvelopeStore.open(storePath));
  console.log(`  read-only, from the indexes: ${median(reader).toFixed(0)} ms (median of 5)`);
  console.log(`  for writing, from the indexes: ${median(writer).toFixed(0)} ms (median of 5)`);
  const copy = join(dir, "scanned");
  rmSync(copy, { recursive: true, force: true });
  (await import("node:fs")).cpSync(storePath, copy, { recursive: true });
  for (const name of readdirSync(copy)) if (name.endsWith(".idx")) rmSync(join(copy, name));
  const t = process.hrtime.bigint();
  const scanned = await openEnvelope(copy);
  const scanMs = seconds(t) * 1000;
  await scanned.close();
  console.log(`  read-only, indexes removed (every frame head scanned): ${scanMs.toFixed(0)} ms`);
  rmSync(copy, { recursive: true });
}
console.log("");

// Get: warm (page cache and descriptors), each read re-hashes its value.
console.log("get");
{
  const source = await openEnvelope(storePath);
  const sample = Array.from({ length: GETS }, (_, i) => digests[Math.floor((i * 7919) % ENTRIES)]).filter((d): d is EntryDigest => d !== undefined);
  for (const d of sample) await source.get(d);
  const times: number[] = [];
  let present = 0;
  for (const d of sample) {
    const t = process.hrtime.bigint();
    const read = await source.get(d);
    times.push(Number(process.hrtime.bigint() - t) / 1000);
    if (read.code === "present") present++;
  }
  await source.close();
  console.log(`  ${sample.length.toLocaleString("en-US")} warm gets (${present} present): median ${fmt(median(times))}, p99 ${fmt(percentile(times, 99))}`);
}
console.log("");

// A full check: every frame read and every value re-hashed.
{
  const t = process.hrtime.bigint();
  const check = await checkEnvelope(storePath);
  const s = seconds(t);
  console.log(
    `check (every frame, every value re-hashed): ${s.toFixed(2)} s, ${check.verified.toLocaleString("en-US")} of ${check.entries.toLocaleString("en-US")} verified, ${check.damage.length} damage`,
  );
}
rmSync(dir, { recursive: true, force: true });
