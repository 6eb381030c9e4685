import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

/**
 * The store's promises against the real order of system calls. node:fs is wrapped so the
 * test sees every frame written, every fsync and which file it was for, and can make a
 * write fail.
 */
const log: string[] = [];
const paths = new Map<number, string>();
const faults = { writeAfter: Number.POSITIVE_INFINITY, writes: 0 };
const FRAME_MAGIC = Buffer.from([0xae, 0x65, 0x6e, 0x76]);

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const name = (fd: number): string => (paths.get(fd) ?? "?").split("/").at(-1) ?? "?";
  const opened = (path: unknown, fd: number): number => {
    paths.set(fd, String(path));
    return fd;
  };
  return {
    ...fs,
    openSync: (path: string, flags: string, mode?: number) => {
      if (String(path).endsWith(".seg")) log.push(`open ${String(path).split("/").at(-1) ?? ""}`);
      return opened(path, fs.openSync(path, flags, mode));
    },
    open: (path: string, flags: string, callback: (error: NodeJS.ErrnoException | null, fd: number) => void) =>
      fs.open(path, flags, (error, fd) => callback(error, error === null ? opened(path, fd) : fd)),
    writevSync: (fd: number, buffers: Uint8Array[], position?: number) => {
      faults.writes++;
      if (faults.writes > faults.writeAfter) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      const n = fs.writevSync(fd, buffers, position);
      // Each frame's prefix and head is one buffer of its own: name every frame written.
      for (const buffer of buffers) {
        const b = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
        if (b.length >= 56 && b.subarray(0, 4).equals(FRAME_MAGIC)) log.push(`write ${b.toString("hex", 24, 56)}`);
      }
      return n;
    },
    fsync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      log.push(`fsync start ${name(fd)}`);
      fs.fsync(fd, (error) => {
        log.push(`fsync done ${name(fd)}`);
        callback(error);
      });
    },
    fsyncSync: (fd: number) => {
      log.push(`fsync start ${name(fd)}`);
      fs.fsyncSync(fd);
      log.push(`fsync done ${name(fd)}`);
    },
  };
});

const { EnvelopeStore, openEnvelope } = await import("../src/index.js");
const { faultOf, marked, tempDir } = await import("./support/stores.js");

beforeEach(() => {
  log.length = 0;
  faults.writeAfter = Number.POSITIVE_INFINITY;
  faults.writes = 0;
});

const syncs = (): number => log.filter((l) => l.startsWith("fsync start") && l.endsWith(".seg")).length;

describe("durability (SPEC §14.5)", () => {
  it("[M14.7] every put resolves only after an fsync of its segment that began after its frame was written", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    log.length = 0;
    const digests = await Promise.all(Array.from({ length: 40 }, (_, i) => store.putRequest(marked(`c${i}`)).then((d) => (log.push(`resolve ${d}`), d))));
    // And one alone, which takes the inline path.
    const alone = await store.putResponse(marked("alone"));
    log.push(`resolve ${alone}`);
    await store.close();
    for (const digest of [...digests, alone]) {
      const written = log.indexOf(`write ${digest}`);
      const done = log.indexOf(`resolve ${digest}`);
      expect(written, `${digest} written`).toBeGreaterThanOrEqual(0);
      const syncStart = log.indexOf("fsync start 00000001.seg", written);
      const syncDone = log.indexOf("fsync done 00000001.seg", syncStart);
      expect(syncStart, `an fsync after ${digest} was written`).toBeGreaterThan(written);
      expect(syncDone, `that fsync finished before ${digest} resolved`).toBeLessThan(done);
    }
  });

  it("[M14.7] concurrent puts share fsyncs (group commit)", async () => {
    const store = await EnvelopeStore.open(join(tempDir(), "store"));
    log.length = 0;
    await Promise.all(Array.from({ length: 64 }, (_, i) => store.putRequest(marked(`g${i}`))));
    const shared = syncs();
    expect(log.filter((l) => l.startsWith("write")).length).toBe(64);
    expect(shared).toBeGreaterThanOrEqual(1);
    expect(shared).toBeLessThan(8);
    log.length = 0;
    for (let i = 0; i < 5; i++) await store.putRequest(marked(`s${i}`));
    expect(syncs()).toBe(5);
    await store.close();
  });

  it("[M14.7] a put into a new segment resolves only after the directory that names the segment is synced", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 1024 });
    log.length = 0;
    const digests: string[] = [];
    for (let i = 0; i < 12; i++) {
      const d = await store.putRequest(marked(`r${i}`, 200));
      log.push(`resolve ${d}`);
      digests.push(d);
    }
    await store.close();
    const rotated = log.indexOf("open 00000002.seg");
    expect(rotated).toBeGreaterThan(0);
    // The first put written into the new segment.
    const first =
      log
        .slice(rotated)
        .find((l) => l.startsWith("write "))
        ?.slice(6) ?? "";
    expect(digests).toContain(first);
    const dirSynced = log.indexOf("fsync done store", rotated);
    expect(dirSynced, "the directory is synced after the segment was created").toBeGreaterThan(rotated);
    expect(dirSynced, "before the first put in it resolves").toBeLessThan(log.indexOf(`resolve ${first}`));
  });

  it("a failed write stops the store: the put and every later one are refused; close still releases it", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const dir = join(tempDir(), "store");
      const store = await EnvelopeStore.open(dir);
      const kept = await store.putRequest(marked("kept"));
      faults.writeAfter = faults.writes;
      expect(await faultOf(store.putRequest(marked("lost")))).toMatchObject({ code: "failed" });
      faults.writeAfter = Number.POSITIVE_INFINITY;
      expect(await faultOf(store.putRequest(marked("later")))).toMatchObject({ code: "failed" });
      expect(await faultOf(store.redact(kept, "why"))).toMatchObject({ code: "failed" });
      await store.close();
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      const again = await EnvelopeStore.open(dir);
      expect((await again.get(kept)).code).toBe("present");
      await again.close();
      const reader = await openEnvelope(dir);
      expect(reader.damage).toEqual([]);
      await reader.close();
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
