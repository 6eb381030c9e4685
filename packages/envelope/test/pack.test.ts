import { existsSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RequestDigest, ResponseDigest } from "@aegis/format";
import { processStart } from "@aegis/format/durable";
import { EnvelopeStore, checkEnvelope, openEnvelope, writePack } from "../src/index.js";
import { type EnvelopeEntry } from "../src/source.js";
import { faultOf, filesContaining, flipByte, marked, offsetIn, tempDir, text } from "./support/stores.js";

const FIXED = new Date("2025-06-01T12:00:00.000Z");
const FRAME_OVERHEAD = 56;

async function storeWith(): Promise<{
  dir: string;
  store: EnvelopeStore;
  kept: RequestDigest[];
  secret: Uint8Array;
  redacted: RequestDigest;
  response: ResponseDigest;
}> {
  const dir = join(tempDir(), "store");
  const store = await EnvelopeStore.open(dir, { segmentBytes: 2048, now: () => FIXED });
  const kept: RequestDigest[] = [];
  for (let i = 0; i < 20; i++) kept.push(await store.putRequest(marked(`k${i}`, 100 + i)));
  const secret = marked("secret-in-a-request", 150);
  const redacted = await store.putRequest(secret);
  const response = await store.putResponse(new Uint8Array(0));
  await store.redact(redacted, "credentials");
  return { dir, store, kept, secret, redacted, response };
}

describe("packs (SPEC §14.9)", () => {
  it("removes the temporary file of a killed pack whose pid another process now holds, and keeps a live one's", async () => {
    const { store, kept } = await storeWith();
    const dir = tempDir();
    const out = join(dir, "handover.aepk");
    const started = processStart(process.pid);
    // This process's pid with another start time: the pack that wrote it died, and the pid was reused.
    const reused = `handover.aepk.tmp-${process.pid}-1-0badf00d`;
    const live = `handover.aepk.tmp-${process.pid}-${started ?? "0"}-0c0ffee0`;
    for (const name of [reused, live]) writeFileSync(join(dir, name), "partial");
    await writePack(store, kept.slice(0, 2), out);
    const left = readdirSync(dir).filter((n) => n.includes(".tmp-"));
    expect(left).toEqual(started === undefined ? [live, reused].sort() : [live]);
    await store.close();
  });

  it("removes a killed pack's temporary file even when that pack was linked (a kill between link and unlink), refusing the existing pack", async () => {
    const { store, kept } = await storeWith();
    const dir = tempDir();
    const out = join(dir, "linked.aepk");
    await writePack(store, kept.slice(0, 1), out);
    const left = `linked.aepk.tmp-${2 ** 22 + 4321}-0-0badcafe`;
    writeFileSync(join(dir, left), "partial");
    await expect(writePack(store, kept.slice(0, 1), out)).rejects.toMatchObject({ fault: { code: "exists" } });
    expect(readdirSync(dir)).toEqual(["linked.aepk"]);
    await store.close();
  });

  it("[M14.12] a pack holds the entries and tombstones asked for, reads back the same, and reports what it left out", async () => {
    const { dir, store, kept, secret, redacted, response } = await storeWith();
    const chosen = [kept[3], kept[17], redacted, response].filter((d): d is RequestDigest => d !== undefined);
    const absent = RequestDigest.of(text("never stored"));
    const out = join(tempDir(), "handover.aepk");
    const report = await writePack(store, [...chosen, absent, kept[3] ?? absent], out);
    expect(report).toEqual({ path: out, entries: 3, tombstones: 1, missing: [absent], mismatched: [], bytes: statSync(out).size });
    expect(filesContaining(join(out, ".."), secret)).toEqual([]);

    const pack = await openEnvelope(out);
    expect(pack.damage).toEqual([]);
    for (const d of [kept[3], kept[17], response]) {
      if (d === undefined) continue;
      expect(await pack.get(d)).toEqual(await store.get(d));
    }
    expect(await pack.get(redacted)).toEqual({ code: "redacted", redactedAt: FIXED.toISOString(), reason: "credentials" });
    expect(await pack.get(kept[0] ?? absent)).toEqual({ code: "missing" });
    const listed: EnvelopeEntry[] = [];
    for await (const e of pack.entries()) listed.push(e);
    expect(listed.map((e) => [e.digest, e.code])).toEqual([
      [kept[3], "present"],
      [kept[17], "present"],
      [response, "present"],
      [redacted, "redacted"],
    ]);
    expect(await pack.entry(redacted)).toEqual({
      code: "redacted",
      digest: redacted,
      size: secret.length,
      redactedAt: FIXED.toISOString(),
      reason: "credentials",
    });
    expect(await pack.stats()).toEqual({ present: { count: 3, bytes: 103 + 117 }, redacted: { count: 1, bytes: 150 }, files: 1, diskBytes: report.bytes });
    expect(await checkEnvelope(out)).toMatchObject({ kind: "pack", entries: 3, verified: 3, tombstones: 1, mismatched: [], damage: [] });
    await pack.close();
    await store.close();

    // A pack of a pack, through a read-only source, is the same pack.
    const again = join(tempDir(), "again.aepk");
    const reopened = await openEnvelope(out);
    await writePack(reopened, [kept[3] ?? absent, kept[17] ?? absent, response, redacted], again, { id: new Uint8Array(16) });
    const third = join(tempDir(), "third.aepk");
    await writePack(await openEnvelope(dir), [kept[3] ?? absent, kept[17] ?? absent, response, redacted], third, { id: new Uint8Array(16) });
    expect(readFileSync(again).equals(readFileSync(third))).toBe(true);
    await reopened.close();
  });

  it("[M14.12] bytes that do not hash to their digest are left out of a pack and reported", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir);
    const value = marked("will rot", 100);
    const rotten = await store.putRequest(value);
    const fine = await store.putRequest(marked("fine"));
    flipByte(join(dir, "00000001.seg"), offsetIn(join(dir, "00000001.seg"), value) + 50);
    const out = join(tempDir(), "p.aepk");
    const report = await writePack(store, [rotten, fine], out);
    expect(report.mismatched).toEqual([{ digest: rotten, found: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(report.entries).toBe(1);
    const pack = await openEnvelope(out);
    expect(await pack.get(rotten)).toEqual({ code: "missing" });
    expect((await pack.get(fine)).code).toBe("present");
    await pack.close();
    await store.close();
  });

  it("[M14.12] a pack is never written over an existing file, nor begun with a digest that is not one", async () => {
    const { store, kept } = await storeWith();
    const dir = tempDir();
    const out = join(dir, "exists.aepk");
    writeFileSync(out, "someone else's file");
    expect(await faultOf(writePack(store, kept, out))).toEqual({ code: "exists", path: out });
    expect(readFileSync(out, "utf8")).toBe("someone else's file");
    const fresh = join(dir, "fresh.aepk");
    expect(await faultOf(writePack(store, [...kept, "not-a-digest"], fresh))).toMatchObject({ code: "bad_digest", text: "not-a-digest" });
    expect(readdirSync(dir)).toEqual(["exists.aepk"]);
    await store.close();
  });

  describe("a damaged pack", () => {
    async function packOf(count: number): Promise<{ out: string; digests: RequestDigest[]; values: Uint8Array[] }> {
      const store = await EnvelopeStore.open(join(tempDir(), "store"));
      const values = Array.from({ length: count }, (_, i) => marked(`p${i}`, 80 + i));
      const digests: RequestDigest[] = [];
      for (const v of values) digests.push(await store.putRequest(v));
      const out = join(tempDir(), "d.aepk");
      await writePack(store, digests, out);
      await store.close();
      return { out, digests, values };
    }

    it("[M14.3] a flipped value byte reads as digest_mismatch; checkEnvelope names its offset", async () => {
      const { out, digests, values } = await packOf(5);
      const at = offsetIn(out, values[2] ?? new Uint8Array());
      flipByte(out, at + 5);
      const pack = await openEnvelope(out);
      expect(pack.damage).toEqual([]);
      expect(await pack.get(digests[2] ?? RequestDigest.of(new Uint8Array()))).toMatchObject({ code: "digest_mismatch", expected: digests[2] });
      for (const i of [0, 1, 3, 4]) expect((await pack.get(digests[i] ?? RequestDigest.of(new Uint8Array()))).code).toBe("present");
      await pack.close();
      expect((await checkEnvelope(out)).mismatched).toEqual([expect.objectContaining({ digest: digests[2], path: out, offset: at - FRAME_OVERHEAD })]);
    });

    it("[M14.10] a damaged frame head is reported with file and offset by a check, and by opening once the index is damaged too", async () => {
      const { out, digests, values } = await packOf(5);
      const frame = offsetIn(out, values[1] ?? new Uint8Array()) - FRAME_OVERHEAD;
      flipByte(out, frame + 25);
      const check = await checkEnvelope(out);
      expect(check.damage).toEqual([expect.objectContaining({ code: "damaged_frame", path: out, offset: frame })]);
      // Damage the index as well: opening falls back to scanning the frames.
      const size = statSync(out).size;
      flipByte(out, size - 16 - 10);
      const pack = await openEnvelope(out);
      expect(pack.damage).toEqual([
        expect.objectContaining({ code: "index_rebuilt", path: out }),
        expect.objectContaining({ code: "damaged_frame", path: out, offset: frame, length: FRAME_OVERHEAD + (values[1]?.length ?? 0) }),
      ]);
      const codes = await Promise.all(digests.map(async (d) => (await pack.get(d)).code));
      expect(codes).toEqual(["present", "missing", "present", "present", "present"]);
      await pack.close();
    });

    it("[M14.10] a pack cut short serves every whole frame before the cut and reports where it was cut", async () => {
      const { out, digests, values } = await packOf(5);
      const cut = offsetIn(out, values[3] ?? new Uint8Array()) + 10;
      truncateSync(out, cut);
      const pack = await openEnvelope(out);
      const frame = cut - 10 - FRAME_OVERHEAD;
      expect(pack.damage).toEqual([
        { code: "index_rebuilt", path: out, detail: 'no "AEGISEND" trailer' },
        { code: "torn_tail", path: out, offset: frame, length: cut - frame, cut: false },
      ]);
      const codes = await Promise.all(digests.map(async (d) => (await pack.get(d)).code));
      expect(codes).toEqual(["present", "present", "present", "missing", "missing"]);
      await pack.close();
    });
  });
});

describe("openEnvelope (SPEC §14.1)", () => {
  it("tells a store from a pack, and refuses anything else saying what it found", async () => {
    const { dir, store, kept } = await storeWith();
    await store.close();
    const out = join(tempDir(), "p.aepk");
    const source = await openEnvelope(dir);
    await writePack(source, kept.slice(0, 2), out);
    expect(source.path).toBe(dir);
    await source.close();
    const pack = await openEnvelope(out);
    expect((await pack.stats()).files).toBe(1);
    await pack.close();

    const empty = tempDir();
    expect(await faultOf(openEnvelope(empty))).toMatchObject({ code: "not_an_envelope", path: empty, detail: expect.stringContaining("aegis-envelope") });
    const other = join(empty, "x.json");
    writeFileSync(other, "{}");
    expect(await faultOf(openEnvelope(other))).toMatchObject({ code: "not_an_envelope", path: other });
    expect(await faultOf(openEnvelope(join(dir, "aegis-envelope")))).toMatchObject({
      code: "not_an_envelope",
      detail: expect.stringContaining("open the directory"),
    });
    expect(await faultOf(openEnvelope(join(empty, "absent")))).toMatchObject({
      code: "io",
      path: join(empty, "absent"),
      detail: "No such file or directory (os error 2)",
    });
  });

  it("[M14.4] a version this reader does not know is refused, for a store and for a pack", async () => {
    const { dir, store, kept } = await storeWith();
    await store.close();
    const out = join(tempDir(), "p.aepk");
    await writePack(await openEnvelope(dir), kept.slice(0, 2), out);
    const pack = readFileSync(out);
    pack.writeUInt16BE(2, 8);
    writeFileSync(out, pack);
    expect(await faultOf(openEnvelope(out))).toEqual({ code: "unsupported_version", path: out, version: 2 });
    expect(await faultOf(checkEnvelope(out))).toEqual({ code: "unsupported_version", path: out, version: 2 });

    const descriptor = join(dir, "aegis-envelope");
    const bytes = readFileSync(descriptor);
    bytes.writeUInt16BE(2, 8);
    writeFileSync(descriptor, bytes);
    expect(await faultOf(openEnvelope(dir))).toEqual({ code: "unsupported_version", path: descriptor, version: 2 });
    expect(await faultOf(EnvelopeStore.open(dir))).toEqual({ code: "unsupported_version", path: descriptor, version: 2 });
    expect(existsSync(join(dir, "writer.lock"))).toBe(false);
    bytes.writeUInt16BE(1, 8);
    bytes[40] = (bytes[40] ?? 0) ^ 1;
    writeFileSync(descriptor, bytes);
    expect(await faultOf(openEnvelope(dir))).toMatchObject({ code: "damaged_descriptor", path: descriptor });
  });
});
