import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";

/**
 * A redaction interrupted between its durable tombstone and the overwrite of the bytes (a
 * crash, or a failed write): the next writer finishes it. The overwrite is made to fail
 * here, which stops the store exactly where a crash would have.
 */
const faults = { scrub: false };

vi.mock("../src/redaction.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/redaction.js")>();
  return {
    ...original,
    scrubValue: async (...args: Parameters<typeof original.scrubValue>) => {
      if (faults.scrub) throw Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
      return original.scrubValue(...args);
    },
  };
});

const { EnvelopeStore, checkEnvelope, openEnvelope } = await import("../src/index.js");
const { faultOf, filesContaining, marked, tempDir } = await import("./support/stores.js");

describe("an interrupted redaction (SPEC §14.8)", () => {
  it("[M14.11] is finished by the next writer: the tombstone stood meanwhile, and then the bytes are gone", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 2048 });
    const secret = marked("password=hunter2", 200);
    const digest = await store.putRequest(secret);
    const others = [];
    for (let i = 0; i < 30; i++) others.push(await store.putRequest(marked(`o${i}`, 200)));

    faults.scrub = true;
    expect(await faultOf(store.redact(digest, "a password"))).toMatchObject({ code: "failed" });
    faults.scrub = false;
    expect(await store.get(digest)).toMatchObject({ code: "redacted", reason: "a password" });
    expect(await faultOf(store.putRequest(marked("refused")))).toMatchObject({ code: "failed" });
    await store.close();
    expect(filesContaining(dir, secret)).toHaveLength(1);

    // A reader changes nothing, and already answers redacted.
    const reader = await openEnvelope(dir);
    expect(await reader.get(digest)).toMatchObject({ code: "redacted", reason: "a password" });
    await reader.close();
    expect(filesContaining(dir, secret)).toHaveLength(1);
    // A full check says the secret is still on disk, and where.
    const [file] = filesContaining(dir, secret);
    expect((await checkEnvelope(dir)).unscrubbed).toEqual([{ digest, path: file, offset: expect.any(Number) as unknown }]);

    const writer = await EnvelopeStore.open(dir, { segmentBytes: 2048 });
    expect(filesContaining(dir, secret)).toEqual([]);
    expect(await writer.get(digest)).toMatchObject({ code: "redacted", reason: "a password" });
    for (const d of others) expect((await writer.get(d)).code).toBe("present");
    await writer.close();
    expect((await checkEnvelope(dir)).unscrubbed).toEqual([]);
  });
});
