import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { RecordWriter, RequestDigest } from "../src/index.js";
import { DEV, POLICY, outcome, tempDir, writeSession } from "./support/chains.js";
import { verifyChainFile } from "../src/verify/verify-record.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";

describe("every altered byte is found", () => {
  let file: Buffer;
  let rowStarts: number[];

  beforeAll(async () => {
    const path = await writeSession(join(tempDir(), "s.aarl"), { calls: 3 });
    file = readFileSync(path);
    rowStarts = [0];
    for (let i = 0; i < file.length - 1; i++) if (file[i] === 0x0a) rowStarts.push(i + 1);
  });

  it("the file as written verifies", () => {
    expect(verifyChainBytes(file).verdict.status).toBe("verified");
  });

  it("[M8.5] altering any single byte of any line never yields Verified", () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), (lineChoice, offsetChoice, delta) => {
        const line = lineChoice % rowStarts.length;
        const start = rowStarts[line] ?? 0;
        const end = (rowStarts[line + 1] ?? file.length) - 1; // the '\n' is not part of the line
        const at = start + (offsetChoice % (end - start));
        const altered = Buffer.from(file);
        altered[at] = ((altered[at] ?? 0) + delta) & 0xff;
        const v = verifyChainBytes(altered);
        expect(v.verdict.status, `byte ${at} of line ${line + 1}`).not.toBe("verified");
      }),
      { numRuns: 2000 },
    );
  });

  it("removing any one line never yields Verified", () => {
    const rows = file
      .toString("utf8")
      .split("\n")
      .filter((r) => r.length > 0);
    rows.forEach((_, i) => {
      const v = verifyChainBytes(rows.filter((__, j) => j !== i).join("\n") + "\n");
      expect(v.verdict.status, `without line ${i + 1}`).not.toBe("verified");
    });
  });
});

describe("concurrent calls never fork the chain", () => {
  it("[M4.2] any interleaving of concurrent calls yields one chain that verifies", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 12 }), async (s, calls) => {
        const path = join(tempDir(), "concurrent.aarl");
        const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
        const work = Array.from({ length: calls }, async (_, i) => {
          const id = `call-${i}`;
          await s.schedule(Promise.resolve(), `start ${id}`);
          await writer.intent({ call_id: id, tool_id: "t", request_digest: RequestDigest.of(Buffer.from(id)), policy_set_hash: POLICY });
          await s.schedule(Promise.resolve(), `run ${id}`);
          await writer.outcome(outcome(id));
        });
        await s.waitFor(Promise.all(work));
        await writer.close();
        const v = await verifyChainFile(path);
        expect(v.verdict.status).toBe("verified");
        expect(v.lines).toBe(2 * calls + 2);
        const rows = readFileSync(path, "utf8")
          .trim()
          .split("\n")
          .map((r) => JSON.parse(r) as { seq: number; call_id?: string; line_type: string });
        expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i));
        for (let i = 0; i < calls; i++) {
          expect(rows.filter((r) => r.call_id === `call-${i}`).map((r) => r.line_type)).toEqual(["intent", "outcome"]);
        }
      }),
      { numRuns: 25 },
    );
  });

  it("appends issued in one burst are all durable and chained", async () => {
    const path = join(tempDir(), "burst.aarl");
    const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => writer.outcome(outcome(`burst-${i}`))));
    expect(results.map((r) => r.seq)).toEqual(results.map((_, i) => i + 1));
    await writer.close();
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });
});
