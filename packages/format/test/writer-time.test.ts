import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecordWriter, RequestDigest } from "../src/index.js";
import { readTypedLine, isLineTime } from "../src/internal.js";
import { DEV, POLICY, outcome, readLines, tempDir } from "./support/chains.js";
import { verifyChainFile } from "../src/verify/verify-record.js";

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function oneCall(path: string, clock?: (() => Date) | false): Promise<void> {
  const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true, ...(clock === undefined ? {} : { clock }) });
  await writer.intent({ call_id: "c", tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from("r")), policy_set_hash: POLICY });
  await writer.outcome(outcome("c"));
  await writer.close();
}

describe("the time member (SPEC §13.7)", () => {
  it("by default every Line carries the system clock's time, RFC 3339 UTC with milliseconds, and the record verifies", async () => {
    const path = join(tempDir(), "t.aarl");
    const before = Date.now();
    await oneCall(path);
    const after = Date.now();
    const lines = readLines(path);
    expect(lines.map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "close"]);
    for (const line of lines) {
      const time = String(line["time"]);
      expect(time).toMatch(RFC3339_MS);
      expect(Date.parse(time)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(time)).toBeLessThanOrEqual(after);
    }
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });

  it("is signed: changing it on a signed Line is Tampered there", async () => {
    const path = join(tempDir(), "t.aarl");
    await oneCall(path, () => new Date("2026-12-03T12:00:00.000Z"));
    const { readFileSync, writeFileSync } = await import("node:fs");
    writeFileSync(
      path,
      readFileSync(path, "utf8").replace(/("line_type":"outcome".*)"time":"2026-12-03T12:00:00.000Z"/, '$1"time":"2026-12-03T12:00:00.001Z"'),
    );
    const v = await verifyChainFile(path);
    expect(v.verdict).toMatchObject({ status: "tampered", reason: { code: "bad_signature", at: { session_index: 0, seq: 2 } } });
  });

  it("reads the clock it is given, once per Line, in append order", async () => {
    const path = join(tempDir(), "t.aarl");
    let tick = Date.parse("2026-12-03T12:00:00.000Z");
    await oneCall(path, () => new Date((tick += 250)));
    expect(readLines(path).map((l) => l["time"])).toEqual([
      "2026-12-03T12:00:00.250Z",
      "2026-12-03T12:00:00.500Z",
      "2026-12-03T12:00:00.750Z",
      "2026-12-03T12:00:01.000Z",
    ]);
  });

  it("clock: false writes no time, as the reference's writer", async () => {
    const path = join(tempDir(), "t.aarl");
    await oneCall(path, false);
    for (const line of readLines(path)) expect(line).not.toHaveProperty("time");
  });

  it("a clock RFC 3339 cannot spell refuses the Line, takes no seq, and the chain goes on whole", async () => {
    const path = join(tempDir(), "t.aarl");
    let bad = false;
    const writer = await RecordWriter.open(path, {
      key: DEV,
      allowInsecureDevKey: true,
      clock: () => (bad ? new Date(Date.UTC(10000, 0, 1)) : new Date("2026-12-03T12:00:00.000Z")),
    });
    bad = true;
    await expect(
      writer.intent({ call_id: "c", tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from("r")), policy_set_hash: POLICY }),
    ).rejects.toThrow(RangeError);
    bad = false;
    await writer.intent({ call_id: "c", tool_id: "fs.read", request_digest: RequestDigest.of(Buffer.from("r")), policy_set_hash: POLICY });
    await writer.outcome(outcome("c"));
    await writer.close();
    expect(readLines(path).map((l) => l["seq"])).toEqual([0, 1, 2, 3]);
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });

  it("a typed reading keeps a time of this shape, and names a time of any other", () => {
    expect(isLineTime("2026-12-03T21:30:27.123Z")).toBe(true);
    for (const other of [
      "2026-12-03T21:30:27Z",
      "2026-12-03T21:30:27.123+00:00",
      "2026-02-30T00:00:00.000Z",
      "+010000-01-01T00:00:00.000Z",
      "2026-12-03 21:30:27.123Z",
    ])
      expect(isLineTime(other), other).toBe(false);
    const close = { line_type: "close", schema_version: 2, seq: 3, prev_hash: "ab".repeat(32), key_id: "cd".repeat(32), signature: "ef".repeat(64) };
    const good = readTypedLine({ ...close, time: "2026-12-03T21:30:27.123Z" });
    expect(good).toMatchObject({ ok: true, value: { line_type: "close", line: { time: "2026-12-03T21:30:27.123Z" } } });
    const bad = readTypedLine({ ...close, time: 1733261427 });
    expect(bad).toMatchObject({ ok: false });
    expect(JSON.stringify(bad)).toContain("$.time: expected a time as YYYY-MM-DDTHH:MM:SS.sssZ");
  });
});

describe("isLineTime", () => {
  // What the rule means: the text is exactly what a Date of it spells back.
  const byDate = (text: string): boolean => {
    const date = new Date(text);
    return RFC3339_MS.test(text) && !Number.isNaN(date.getTime()) && date.toISOString() === text;
  };
  const digits = (n: number): fc.Arbitrary<string> => fc.integer({ min: 0, max: 10 ** n - 1 }).map((v) => String(v).padStart(n, "0"));

  it("agrees with a Date's own spelling on every date and time of the writer's shape", () => {
    const near = fc.tuple(
      digits(4),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 25 }),
      fc.integer({ min: 0, max: 61 }),
      fc.integer({ min: 0, max: 61 }),
      digits(3),
    );
    fc.assert(
      fc.property(near, ([y, mo, d, h, mi, s, ms]) => {
        const p2 = (v: number): string => String(v).padStart(2, "0");
        const text = `${y}-${p2(mo)}-${p2(d)}T${p2(h)}:${p2(mi)}:${p2(s)}.${ms}Z`;
        expect(isLineTime(text), text).toBe(byDate(text));
      }),
      { numRuns: 20_000 },
    );
    for (const leap of [
      "2024-02-29T00:00:00.000Z",
      "2000-02-29T12:00:00.000Z",
      "1900-02-29T12:00:00.000Z",
      "2100-02-29T00:00:00.000Z",
      "0000-02-29T00:00:00.000Z",
    ])
      expect(isLineTime(leap), leap).toBe(byDate(leap));
  });
});
