import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RequestDigest, ResponseDigest } from "@aegis/format";
import { tryParseDigest } from "@aegis/format/internal";
import { EnvelopeStore, checkEnvelope, openEnvelope } from "../src/index.js";
import { MAX_REASON_BYTES } from "../src/internal.js";
import { type EnvelopeEntry } from "../src/source.js";
import { faultOf, filesContaining, flipByte, marked, offsetIn, tempDir, text } from "./support/stores.js";

const FIXED = new Date("2025-06-01T12:00:00.000Z");

describe("put and get (SPEC §14.1)", () => {
  it("[M14.1] arbitrary bytes, empty included, round-trip under the digest of exactly those bytes", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 64 * 1024 });
    const kept: { digest: RequestDigest | ResponseDigest; bytes: Uint8Array }[] = [];
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), fc.boolean(), async (bytes, asRequest) => {
        const digest = asRequest ? await store.putRequest(bytes) : await store.putResponse(bytes);
        expect(digest).toBe(RequestDigest.of(bytes));
        const read = await store.get(digest);
        expect(read).toEqual({ code: "present", bytes: Buffer.from(bytes) });
        kept.push({ digest, bytes });
      }),
      {
        numRuns: 300,
        examples: [
          [new Uint8Array(0), true],
          [new Uint8Array(0), false],
        ],
      },
    );
    await store.close();
    // And the same from a fresh reader, through the indexes the writer left.
    const reader = await openEnvelope(dir);
    for (const { digest, bytes } of kept) expect(await reader.get(digest)).toEqual({ code: "present", bytes: Buffer.from(bytes) });
    expect(reader.damage).toEqual([]);
    await reader.close();
  });

  it("[M14.1] a 10 MB value round-trips, live and after reopening", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 1024 * 1024 });
    const big = new Uint8Array(10 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) & 0xff;
    const small = await store.putRequest(text("before"));
    const digest = await store.putResponse(big);
    const after = await store.putRequest(text("after"));
    const read = await store.get(digest);
    expect(read.code).toBe("present");
    expect(read.code === "present" && Buffer.from(read.bytes).equals(big)).toBe(true);
    await store.close();
    const reader = await openEnvelope(dir);
    const again = await reader.get(digest);
    expect(again.code === "present" && Buffer.from(again.bytes).equals(big)).toBe(true);
    expect((await reader.get(small)).code).toBe("present");
    expect((await reader.get(after)).code).toBe("present");
    expect(await reader.entry(digest)).toEqual({ code: "present", digest, size: big.length });
    await reader.close();
  });

  it("[M14.1] the bytes kept are the bytes hashed when put was called, whatever the caller does with its array after", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    const bytes = text("original request");
    const put = store.putRequest(bytes);
    bytes.fill(0x41);
    const digest = await put;
    expect(digest).toBe(RequestDigest.of(text("original request")));
    expect(await store.get(digest)).toEqual({ code: "present", bytes: Buffer.from("original request") });
    await store.close();
  });

  it("[M14.1] no method stores bytes under a digest the caller supplies", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    const digest = RequestDigest.of(text("x"));
    // @ts-expect-error putRequest takes the bytes alone: there is no digest to give it.
    await store.putRequest(text("y"), digest);
    expect(await store.get(digest)).toEqual({ code: "missing" });
    // @ts-expect-error nor is there any other way in.
    expect(store.put).toBeUndefined();
    expect(store.putRequest.length).toBe(1);
    expect(store.putResponse.length).toBe(1);
    await store.close();
  });

  it("refuses what is not bytes, and a digest that is not 64 lowercase hex", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    // @ts-expect-error a string is not bytes
    expect(await faultOf(store.putRequest("text"))).toMatchObject({ code: "not_bytes" });
    const upper = "A".repeat(64) as RequestDigest;
    expect(await faultOf(store.get(upper))).toMatchObject({ code: "bad_digest" });
    expect(await faultOf(store.redact(upper, "why"))).toMatchObject({ code: "bad_digest" });
    await store.close();
  });

  it("[M14.2] identical bytes are stored once, whether put together, one after another, or as request and response", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir);
    const bytes = marked("same", 1000);
    const digests = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? store.putRequest(bytes) : store.putResponse(bytes))));
    expect(new Set(digests).size).toBe(1);
    await store.putRequest(bytes);
    await store.putResponse(bytes);
    const stats = await store.stats();
    expect(stats.present).toEqual({ count: 1, bytes: 1000 });
    await store.close();
    const segment = readdirSync(dir).filter((n) => n.endsWith(".seg"));
    expect(segment).toHaveLength(1);
    const content = readFileSync(join(dir, segment[0] ?? ""));
    expect(content.indexOf(bytes)).toBe(content.lastIndexOf(bytes));
  });

  it("a clock that gives no point in time refuses the redaction and leaves the bytes", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"), { now: () => new Date(Number.NaN) });
    const bytes = marked("secret", 64);
    const digest = await store.putRequest(bytes);
    await expect(store.redact(digest, "contains a token")).rejects.toThrow(/clock returned Invalid Date.*nothing was redacted/);
    expect(await store.entry(digest)).toEqual({ code: "present", digest, size: 64 });
    const read = await store.get(digest);
    expect(read.code === "present" && Buffer.from(read.bytes).equals(bytes)).toBe(true);
    await store.close();
  });

  it("entries() lists each entry with its state and size; stats() counts them", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"), { now: () => FIXED });
    const a = await store.putRequest(marked("a", 10));
    const b = await store.putResponse(marked("b", 20));
    await store.redact(b, "contains a token");
    const listed: EnvelopeEntry[] = [];
    for await (const entry of store.entries()) listed.push(entry);
    expect(listed).toEqual([
      { code: "present", digest: a, size: 10 },
      { code: "redacted", digest: b, size: 20, redactedAt: FIXED.toISOString(), reason: "contains a token" },
    ]);
    const stats = await store.stats();
    expect(stats.present).toEqual({ count: 1, bytes: 10 });
    expect(stats.redacted).toEqual({ count: 1, bytes: 20 });
    expect(stats.files).toBeGreaterThanOrEqual(2);
    expect(await store.entry(RequestDigest.of(text("never")))).toBeUndefined();
    await store.close();
  });
});

describe("a reader beside a live writer (SPEC §14.1)", () => {
  it("finds what the writer put after the reader opened, in the same segment and in a new one", async () => {
    const dir = join(tempDir(), "store");
    const writer = await EnvelopeStore.open(dir, { segmentBytes: 4096 });
    const early = await writer.putRequest(marked("early"));
    const reader = await openEnvelope(dir);
    const later = await writer.putRequest(marked("later"));
    expect((await reader.get(later)).code).toBe("present");
    const many: RequestDigest[] = [];
    for (let i = 0; i < 80; i++) many.push(await writer.putRequest(marked(`more ${i}`)));
    expect(readdirSync(dir).filter((n) => n.endsWith(".seg")).length).toBeGreaterThan(1);
    for (const d of [early, ...many]) expect((await reader.get(d)).code, d).toBe("present");
    // A digest no one put is still missing, after one look.
    expect((await reader.get(RequestDigest.of(text("never put")))).code).toBe("missing");
    await reader.close();
    await writer.close();
  });
});

describe("reading re-hashes (SPEC §14.1)", () => {
  it("[M14.3] a flipped byte in a stored value reads as digest_mismatch, with the digest asked for and what the bytes hash to", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir);
    const before = await store.putRequest(marked("before"));
    const value = marked("victim", 200);
    const victim = await store.putRequest(value);
    const after = await store.putRequest(marked("after"));
    await store.close();
    const segment = join(dir, "00000001.seg");
    const at = offsetIn(segment, value) + 100;
    flipByte(segment, at);
    const damaged = Buffer.from(value);
    damaged[100] = (damaged[100] ?? 0) ^ 0x01;

    for (const open of [() => openEnvelope(dir), () => EnvelopeStore.open(dir)]) {
      const source = await open();
      expect(await source.get(victim)).toEqual({ code: "digest_mismatch", expected: victim, found: RequestDigest.of(damaged) });
      expect((await source.get(before)).code).toBe("present");
      expect((await source.get(after)).code).toBe("present");
      await source.close();
    }
  });

  it("[M14.3] a value changed on disk while the store is open is caught by the next read, not served", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir);
    const value = marked("live", 100);
    const digest = await store.putResponse(value);
    expect((await store.get(digest)).code).toBe("present");
    flipByte(join(dir, "00000001.seg"), offsetIn(join(dir, "00000001.seg"), value) + 3);
    const read = await store.get(digest);
    expect(read.code).toBe("digest_mismatch");
    expect(read.code === "digest_mismatch" && tryParseDigest("ResponseDigest", read.found).ok).toBe(true);
    await store.close();
  });

  it("a digest the store never held is missing", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    expect(await store.get(ResponseDigest.of(text("nothing")))).toEqual({ code: "missing" });
    await store.close();
  });
});

describe("redaction (SPEC §14.8)", () => {
  it("[M14.11] a redacted entry reads as redacted with when and why, and its bytes occur nowhere in the store directory", async () => {
    const dir = join(tempDir(), "store");
    // Small segments, so the secret ends up in a sealed segment with an index beside it.
    const store = await EnvelopeStore.open(dir, { segmentBytes: 4096, now: () => FIXED });
    const secret = text(`{"token":"sk-live-${"9".repeat(40)}"}`);
    const others = [];
    for (let i = 0; i < 10; i++) others.push(await store.putRequest(marked(`other-${i}`, 300)));
    const digest = await store.putRequest(secret);
    for (let i = 10; i < 40; i++) others.push(await store.putRequest(marked(`other-${i}`, 300)));
    expect(filesContaining(dir, secret)).toHaveLength(1);

    const outcome = await store.redact(digest, "an API token was sent to the tool");
    expect(outcome).toEqual({
      code: "redacted",
      digest,
      redactedAt: FIXED.toISOString(),
      reason: "an API token was sent to the tool",
      removedBytes: secret.length,
    });
    expect(filesContaining(dir, secret)).toEqual([]);
    expect(await store.get(digest)).toEqual({ code: "redacted", redactedAt: FIXED.toISOString(), reason: "an API token was sent to the tool" });
    await store.close();
    expect(filesContaining(dir, secret)).toEqual([]);

    for (const open of [() => openEnvelope(dir), () => EnvelopeStore.open(dir)]) {
      const source = await open();
      expect(await source.get(digest)).toEqual({ code: "redacted", redactedAt: FIXED.toISOString(), reason: "an API token was sent to the tool" });
      for (const other of others) expect((await source.get(other)).code).toBe("present");
      expect((await source.stats()).redacted).toEqual({ count: 1, bytes: secret.length });
      expect(source.damage).toEqual([]);
      await source.close();
    }
  });

  it("[M14.11] redacting a missing digest answers missing; twice answers already_redacted; the same bytes put again are not kept", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { now: () => FIXED });
    expect(await store.redact(RequestDigest.of(text("never put")), "why")).toEqual({ code: "missing" });
    const secret = marked("secret", 100);
    const digest = await store.putRequest(secret);
    const [first, second] = await Promise.all([store.redact(digest, "one"), store.redact(digest, "two")]);
    expect(first).toMatchObject({ code: "redacted", reason: "one" });
    expect(second).toEqual({ code: "already_redacted", redactedAt: FIXED.toISOString(), reason: "one" });
    expect(await store.redact(digest, "three")).toEqual({ code: "already_redacted", redactedAt: FIXED.toISOString(), reason: "one" });
    expect(await store.putRequest(secret)).toBe(digest);
    expect(await store.get(digest)).toMatchObject({ code: "redacted" });
    await store.close();
    expect(filesContaining(dir, secret)).toEqual([]);
  });

  it("[M14.11] a put of bytes whose redaction is in progress resolves only once the tombstone is durable", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"), { now: () => FIXED });
    const secret = marked("racing", 100);
    const order: string[] = [];
    const first = store.putRequest(secret).then(() => order.push("put 1"));
    const redaction = store.redact(RequestDigest.of(secret), "why").then(() => order.push("redact"));
    const second = store.putRequest(secret).then(() => order.push("put 2"));
    await Promise.all([first, redaction, second]);
    expect(order.indexOf("put 2")).toBeGreaterThan(order.indexOf("redact"));
    await store.close();
  });

  it("[M14.11] the tombstone alone refuses the bytes: with the entry's frame lost, a put of the same bytes still keeps nothing", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { now: () => FIXED });
    const secret = marked("secret again", 100);
    const digest = await store.putRequest(secret);
    await store.putRequest(marked("neighbour"));
    await store.redact(digest, "leaked");
    await store.close();
    // Lose the (scrubbed) entry frame: damage its head and make the next open scan.
    const segment = join(dir, "00000001.seg");
    flipByte(segment, 40);
    (await import("node:fs")).rmSync(join(dir, "00000001.idx"));
    const again = await EnvelopeStore.open(dir);
    expect(again.damage).toEqual([expect.objectContaining({ code: "damaged_frame", offset: 32 })]);
    expect(await again.putRequest(secret)).toBe(digest);
    expect(await again.get(digest)).toMatchObject({ code: "redacted", reason: "leaked" });
    await again.close();
    expect(filesContaining(dir, secret)).toEqual([]);
  });

  it("a reason that cannot be kept is refused before anything is written", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    const digest = await store.putRequest(text("x"));
    expect(await store.redact(digest, "")).toMatchObject({ code: "reason_refused" });
    expect(await store.redact(digest, "lone \ud800 surrogate")).toMatchObject({ code: "reason_refused" });
    expect(await store.redact(digest, "x".repeat(MAX_REASON_BYTES + 1))).toMatchObject({ code: "reason_refused" });
    expect((await store.get(digest)).code).toBe("present");
    expect(await store.redact(digest, "é".repeat(MAX_REASON_BYTES / 2))).toMatchObject({ code: "redacted" });
    await store.close();
  });
});

describe("segments and indexes (SPEC §14.3, §14.4)", () => {
  it("many entries make few files: segments rotate by size, each with one index", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 64 * 1024 });
    const digests = await Promise.all(Array.from({ length: 2000 }, (_, i) => store.putRequest(marked(`n${i}`, 100))));
    await store.close();
    const names = readdirSync(dir);
    const segments = names.filter((n) => n.endsWith(".seg"));
    // 2000 frames of 156 bytes in segments of 64 KiB: 5 segments, 5 indexes, 1 descriptor.
    expect(segments.length).toBe(5);
    expect(names.filter((n) => n.endsWith(".idx")).length).toBe(segments.length);
    expect(names.length).toBe(2 * segments.length + 1);
    for (const s of segments) expect(statSync(join(dir, s)).size).toBeLessThanOrEqual(64 * 1024);
    const reader = await openEnvelope(dir);
    for (const d of digests) expect((await reader.get(d)).code).toBe("present");
    expect((await reader.stats()).present.count).toBe(2000);
    await reader.close();
  });

  it("puts of small and large values made together land whole, each frame where the index says", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 512 * 1024 });
    const values = Array.from({ length: 600 }, (_, i) => marked(`mixed-${i}`, i % 25 === 0 ? 100_000 + i : 50 + (i % 300)));
    const digests = await Promise.all(values.map((v, i) => (i % 2 === 0 ? store.putRequest(v) : store.putResponse(v))));
    for (const [i, d] of digests.entries()) expect(await store.get(d)).toEqual({ code: "present", bytes: Buffer.from(values[i] ?? new Uint8Array()) });
    await store.close();
    const check = await checkEnvelope(dir);
    expect(check).toMatchObject({ entries: 600, verified: 600, mismatched: [], damage: [] });
    const reader = await openEnvelope(dir);
    for (const d of digests) expect((await reader.get(d)).code).toBe("present");
    await reader.close();
  });

  it("[M14.6] opening trusts an index that checks and does not read the frames it covers", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir);
    const value = marked("covered", 100);
    const digest = await store.putRequest(value);
    await store.close();
    // Damage the frame's head (its check bytes), not its value: only a scan would notice.
    const segment = join(dir, "00000001.seg");
    flipByte(segment, offsetIn(segment, value) - 40);
    const reader = await openEnvelope(dir);
    expect(reader.damage).toEqual([]);
    expect((await reader.get(digest)).code).toBe("present");
    await reader.close();
  });

  it("[M14.6] an index that does not check is not used: the segment is scanned, that is reported, and a writer rewrites it", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir);
    const digests = await Promise.all(Array.from({ length: 20 }, (_, i) => store.putRequest(marked(`i${i}`))));
    await store.close();
    const index = join(dir, "00000001.idx");
    for (const corrupt of [
      (b: Buffer) => void (b[100] = (b[100] ?? 0) ^ 1), // a record
      (b: Buffer) => void (b[13] = 2), // the segment number
      (b: Buffer) => void b.writeBigUInt64BE(1n << 40n, 16), // covers more than the file
    ]) {
      const good = readFileSync(index);
      const bad = Buffer.from(good);
      corrupt(bad);
      writeFileSync(index, bad);
      const reader = await openEnvelope(dir);
      expect(reader.damage).toEqual([expect.objectContaining({ code: "index_rebuilt", path: index })]);
      for (const d of digests) expect((await reader.get(d)).code).toBe("present");
      await reader.close();
      writeFileSync(index, good);
    }
    // Another store's index does not check in this one (its checksum is keyed by the store id).
    const other = join(tempDir(), "other");
    const foreign = await EnvelopeStore.open(other);
    await foreign.putRequest(marked("foreign"));
    await foreign.close();
    writeFileSync(index, readFileSync(join(other, "00000001.idx")));
    const writer = await EnvelopeStore.open(dir);
    expect(writer.damage).toEqual([expect.objectContaining({ code: "index_rebuilt", path: index })]);
    for (const d of digests) expect((await writer.get(d)).code).toBe("present");
    await writer.close();
    const reader = await openEnvelope(dir);
    expect(reader.damage).toEqual([]);
    expect((await reader.stats()).present.count).toBe(20);
    await reader.close();
  });
});

describe("one writer per store (SPEC §14.6)", () => {
  it("[M14.9] a second writer is refused while the first holds the store; readers are not; the lock goes with close", async () => {
    const dir = join(tempDir(), "store");
    const first = await EnvelopeStore.open(dir);
    const digest = await first.putRequest(text("held"));
    expect(await faultOf(EnvelopeStore.open(dir))).toMatchObject({
      code: "locked",
      lockPath: join(dir, "writer.lock"),
      holder: { pid: process.pid },
      stale: false,
    });
    const reader = await openEnvelope(dir);
    expect((await reader.get(digest)).code).toBe("present");
    await reader.close();
    await first.close();
    expect(existsSync(join(dir, "writer.lock"))).toBe(false);
    const second = await EnvelopeStore.open(dir);
    await second.close();
  });

  it("[M14.9] a lock left by a process that is gone is recovered; a live holder's is not", async () => {
    const dir = join(tempDir(), "store");
    await (await EnvelopeStore.open(dir)).close();
    const host = (await import("node:os")).hostname();
    const gone = { pid: 2 ** 22 + 12345, host };
    writeFileSync(join(dir, "writer.lock"), `${JSON.stringify(gone)}\n`);
    const store = await EnvelopeStore.open(dir);
    expect(store.recoveredLock).toEqual({ code: "dead_holder", holder: gone });
    await store.close();
    const live = { pid: process.ppid, host };
    writeFileSync(join(dir, "writer.lock"), `${JSON.stringify(live)}\n`);
    expect(await faultOf(EnvelopeStore.open(dir))).toMatchObject({ code: "locked", holder: live, stale: false });
    expect(existsSync(join(dir, "writer.lock"))).toBe(true);
  });

  it("a closed store refuses puts, redactions and reads; so does a closed reader", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    const digest = await store.putRequest(text("x"));
    await store.close();
    await store.close();
    expect(await faultOf(store.putRequest(text("y")))).toEqual({ code: "closed" });
    expect(await faultOf(store.redact(digest, "why"))).toEqual({ code: "closed" });
    expect(await faultOf(store.get(digest))).toEqual({ code: "closed" });
    const reader = await openEnvelope(store.path);
    await reader.close();
    expect(await faultOf(reader.get(digest))).toEqual({ code: "closed" });
  });

  it("a directory that holds other files is not made a store", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "notes.txt"), "mine");
    expect(await faultOf(EnvelopeStore.open(dir))).toMatchObject({ code: "not_an_envelope", path: dir });
    expect(existsSync(join(dir, "writer.lock"))).toBe(false);
  });
});
