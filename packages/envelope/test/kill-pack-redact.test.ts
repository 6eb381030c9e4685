import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RequestDigest } from "@aegis/format";
import { EnvelopeStore, openEnvelope, writePack } from "../src/index.js";
import { assertBuilt, runUntilKilled, seeded } from "./support/children.js";
import { filesContaining, marked, tempDir } from "./support/stores.js";

const PACK_CHILD = fileURLToPath(new URL("./support/pack-child.mjs", import.meta.url));
const REDACT_CHILD = fileURLToPath(new URL("./support/redact-child.mjs", import.meta.url));
const SEED = Number(process.env["AEGIS_CRASH_SEED"] ?? Date.now() % 2 ** 31);
const ROUNDS = Math.max(10, Math.floor(Number(process.env["AEGIS_CRASH_ROUNDS"] ?? 50) / 5));

async function storeWith(count: number, size: number): Promise<{ dir: string; values: Uint8Array[]; digests: RequestDigest[] }> {
  const dir = join(tempDir(), "store");
  const store = await EnvelopeStore.open(dir, { segmentBytes: 4 * 1024 * 1024 });
  const values = Array.from({ length: count }, (_, i) => marked(`value ${i}`, size));
  const digests = await Promise.all(values.map((v) => store.putRequest(v)));
  await store.close();
  return { dir, values, digests };
}

describe("envelope pack killed at random points (SPEC §14.9)", () => {
  it(`${ROUNDS} kills: the pack is whole or absent, and the next pack removes what a kill left`, { timeout: 60_000 + ROUNDS * 5_000 }, async () => {
    assertBuilt("format", "envelope");
    const { dir, digests } = await storeWith(400, 64 * 1024);
    const random = seeded(SEED);
    // How long a pack takes here, now: kills are spread over that, so some land mid-pack.
    const timing = await openEnvelope(dir);
    const started = performance.now();
    await writePack(timing, digests, join(tempDir(), "timed.pack"));
    const took = performance.now() - started;
    await timing.close();
    let whole = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const at = `round ${round} (AEGIS_CRASH_SEED=${SEED})`;
      const out = join(tempDir(), "out.pack");
      // Killed within 0.8x a pack's time after it started: mostly mid-pack, now and then after the link.
      const delay = Math.floor(random() * took * 0.8);
      await runUntilKilled(PACK_CHILD, [dir, out], (line, _count, kill) => {
        if (line === "packing") setTimeout(kill, delay);
        return line === "packed";
      });
      const names = readdirSync(dirname(out));
      if (names.includes("out.pack")) {
        const pack = await openEnvelope(out);
        expect(pack.damage, at).toEqual([]);
        for (const d of digests) expect((await pack.get(d)).code, at).toBe("present");
        await pack.close();
        whole++;
      }
      // Whatever the kill left beside it, the next pack to that path removes, even one refused
      // because the pack exists (a kill between the link and the unlink leaves both); and it packs.
      const again = join(dirname(out), "again.pack");
      const source = await openEnvelope(dir);
      if (names.includes("out.pack")) await expect(writePack(source, digests.slice(0, 3), out), at).rejects.toMatchObject({ fault: { code: "exists" } });
      else await writePack(source, digests.slice(0, 3), out);
      await writePack(source, digests.slice(0, 1), again);
      await source.close();
      expect(
        readdirSync(dirname(out)).filter((n) => n.includes(".tmp-")),
        at,
      ).toEqual([]);
    }
    // Some kills must have landed before the link, or the test showed nothing.
    expect(whole, `AEGIS_CRASH_SEED=${SEED}`).toBeLessThan(ROUNDS);
  });
});

describe("envelope redact killed at random points (SPEC §14.8)", () => {
  it(`${ROUNDS} kills: every acknowledged redaction holds, its bytes are gone, and the store opens`, { timeout: 60_000 + ROUNDS * 5_000 }, async () => {
    assertBuilt("format", "envelope");
    const random = seeded(SEED + 1);
    for (let round = 0; round < ROUNDS; round++) {
      const at = `round ${round} (AEGIS_CRASH_SEED=${SEED})`;
      const { dir, values, digests } = await storeWith(40, 2048);
      const target = 1 + Math.floor(random() * 30);
      const lines = await runUntilKilled(REDACT_CHILD, [dir, ...digests], (_line, count) => count - 1 >= target);
      expect(lines[0], at).toBe("ready");
      const redacted = new Set(lines.slice(1));
      // Opening as the writer finishes what a kill interrupted (SPEC §14.8).
      const store = await EnvelopeStore.open(dir);
      expect(store.recoveredLock, at).toMatchObject({ code: "dead_holder" });
      for (const [i, d] of digests.entries()) {
        const read = await store.get(d);
        if (redacted.has(d)) {
          expect(read.code, `${at}: ${d}`).toBe("redacted");
          expect(filesContaining(dir, values[i] ?? new Uint8Array()), `${at}: bytes of ${d}`).toEqual([]);
        } else {
          expect(["present", "redacted"], `${at}: ${d}`).toContain(read.code);
        }
      }
      await store.close();
    }
  });
});
