import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RequestDigest } from "@aegis/format";
import { EnvelopeStore, openEnvelope } from "../src/index.js";
import { assertBuilt, runUntilKilled } from "./support/children.js";
import { marked, tempDir } from "./support/stores.js";

const CHILD = fileURLToPath(new URL("./support/put-child.mjs", import.meta.url));

/** Start the child, let it acknowledge `acknowledged` puts, then SIGKILL it mid-stream. */
async function putUntilKilled(dir: string, acknowledged: number): Promise<string[]> {
  const lines = await runUntilKilled(CHILD, [dir], (_line, count) => count - 1 >= acknowledged);
  expect(lines[0]).toBe("ready");
  return lines.slice(1);
}

describe("a writer killed while putting (SPEC §14.5)", () => {
  it("[M14.8] leaves a store that opens, keeps every acknowledged entry, and accepts new puts", { timeout: 120_000 }, async () => {
    assertBuilt("format", "envelope");
    const dir = join(tempDir(), "store");
    const acknowledged: string[] = [];
    for (const [round, count] of [300, 700, 150].entries()) {
      const digests = await putUntilKilled(dir, count);
      expect(digests.length, `round ${round}`).toBeGreaterThanOrEqual(count);
      acknowledged.push(...digests);

      // A reader needs no lock and changes nothing.
      const reader = await openEnvelope(dir);
      for (const d of acknowledged) expect((await reader.get(RequestDigest.parse(d))).code, d).toBe("present");
      expect(reader.damage.filter((d) => d.code !== "torn_tail")).toEqual([]);
      await reader.close();

      // The killed writer's lock is stale (its pid is gone): the next writer recovers it.
      const writer = await EnvelopeStore.open(dir, { segmentBytes: 256 * 1024 });
      expect(writer.recoveredLock).toMatchObject({ code: "dead_holder" });
      expect(writer.damage.filter((d) => d.code !== "torn_tail" || !d.cut)).toEqual([]);
      for (const d of acknowledged) expect((await writer.get(RequestDigest.parse(d))).code, d).toBe("present");
      const added = await writer.putRequest(marked(`after round ${round}`));
      expect((await writer.get(added)).code).toBe("present");
      acknowledged.push(added);
      await writer.close();
    }
    const final = await openEnvelope(dir);
    expect(final.damage).toEqual([]);
    expect((await final.stats()).present.count).toBeGreaterThanOrEqual(acknowledged.length);
    await final.close();
    expect(readdirSync(dir).filter((n) => n.endsWith(".seg")).length).toBeGreaterThan(1);
  });
});
