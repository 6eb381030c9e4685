import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

/**
 * The writer's promises against the real order of system calls. node:fs is wrapped so the
 * test sees every write and every fsync, and can make one fail.
 */
const log: string[] = [];
const faults = { writeAfter: Number.POSITIVE_INFINITY, writes: 0 };

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    writeSync: (fd: number, buffer: Buffer, offset?: number, length?: number) => {
      faults.writes++;
      if (faults.writes > faults.writeAfter) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      const n = fs.writeSync(fd, buffer, offset, length);
      const text = buffer.toString("utf8", offset ?? 0, (offset ?? 0) + n);
      for (const m of text.matchAll(/"seq":(\d+)/g)) log.push(`write ${m[1] ?? ""}`);
      return n;
    },
    fsync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      log.push("fsync start");
      fs.fsync(fd, (error) => {
        log.push("fsync done");
        callback(error);
      });
    },
    fsyncSync: (fd: number) => {
      log.push("fsync start");
      fs.fsyncSync(fd);
      log.push("fsync done");
    },
  };
});

const { RecordWriter, RecordWriterError, RequestDigest } = await import("../src/index.js");
const { verifyChainFile } = await import("../src/verify/verify-record.js");
const { DEV, POLICY, outcome, readLines, tempDir } = await import("./support/chains.js");

beforeEach(() => {
  log.length = 0;
  faults.writeAfter = Number.POSITIVE_INFINITY;
  faults.writes = 0;
});

describe("durability (SPEC §13.2)", () => {
  it("every append resolves only after an fsync that began after its line was written", async () => {
    const writer = await RecordWriter.open(join(tempDir(), "d.aarl"), { key: DEV, allowInsecureDevKey: true });
    const resolved = await Promise.all(
      Array.from({ length: 40 }, (_, i) => writer.outcome(outcome(`c${i}`)).then((a) => (log.push(`resolve ${a.seq}`), a.seq))),
    );
    await writer.close();
    for (const seq of resolved) {
      const written = log.indexOf(`write ${seq}`);
      const done = log.indexOf(`resolve ${seq}`);
      expect(written, `line ${seq} written`).toBeGreaterThanOrEqual(0);
      const syncStart = log.indexOf("fsync start", written);
      const syncDone = log.indexOf("fsync done", syncStart);
      expect(syncStart, `an fsync after line ${seq}`).toBeGreaterThan(written);
      expect(syncDone, `that fsync finished before line ${seq} resolved`).toBeLessThan(done);
    }
    // Group commit: 40 concurrent appends did not take 40 fsyncs.
    expect(log.filter((l) => l === "fsync start").length).toBeLessThan(20);
  });

  it("a failed write stops the writer: pending and later appends are refused, close() does not leave a rejection unobserved", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const path = join(tempDir(), "e.aarl");
      const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
      await writer.beginCall({ call_id: "open-call", tool_id: "t", request_digest: RequestDigest.of(Buffer.from("x")), policy_set_hash: POLICY });
      faults.writeAfter = faults.writes;
      await expect(writer.outcome(outcome("lost"))).rejects.toMatchObject({ fault: { code: "failed" } });
      await expect(writer.outcome(outcome("later"))).rejects.toBeInstanceOf(RecordWriterError);
      await expect(writer.close()).rejects.toMatchObject({ fault: { code: "failed" } });
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      faults.writeAfter = Number.POSITIVE_INFINITY;
      // The lock was released: the file can be reopened, and what was written verifies.
      const again = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
      await again.close();
      expect((await verifyChainFile(path)).verdict.status).toBe("verified");
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("an outcome refused for its content leaves its call in flight, so close() still records one", async () => {
    const path = join(tempDir(), "f.aarl");
    const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
    await writer.beginCall({ call_id: "c1", tool_id: "t", request_digest: RequestDigest.of(Buffer.from("x")), policy_set_hash: POLICY });
    const { call_id: _c, tool_id: _t, request_digest: _r, policy_set_hash: _p, ...result } = outcome("c1");
    await expect(writer.endCall("c1", { ...result, wall_ms: 0.5 })).rejects.toMatchObject({ fault: { code: "not_canonical" } });
    expect(writer.inFlight).toEqual(["c1"]);
    await writer.close();
    const outcomes = readLines(path).filter((l) => l["line_type"] === "outcome");
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ call_id: "c1", execution: { status: "host_denied", reason: "session abandoned" } });
  });
});
