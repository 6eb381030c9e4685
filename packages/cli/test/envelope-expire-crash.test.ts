import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, PolicySetHash, SigningKey } from "@aegis/format";
import { EnvelopeStore, checkEnvelope, openEnvelope } from "@aegis/envelope";
import { BIN, aegis, tempDir } from "./support.js";

/**
 * `aegis envelope expire` killed at random points (SPEC §14.12, the method of the Envelope's
 * crash tests: a real process, SIGKILL once it has acknowledged some entries): what it
 * printed holds, the store opens and stays consistent, and running it again finishes.
 */
const SEED = Number(process.env["AEGIS_CRASH_SEED"] ?? Date.now() % 2 ** 31);
const ROUNDS = Math.max(4, Math.floor(Number(process.env["AEGIS_CRASH_ROUNDS"] ?? 50) / 10));
const OLD_CALLS = 150;
const NEW_CALLS = 10;
const KEY = SigningKey.fromSeed(new Uint8Array(32).fill(44));
const sha256 = (data: string): string => createHash("sha256").update(data).digest("hex");

function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** A value of about 2 KiB that names itself, so that its bytes can be looked for in the store's files. */
const value = (name: string): string => `${name}:${"x".repeat(2000)}:${name}`;

async function fixture(): Promise<{ store: string; record: string; old: string[]; fresh: string[] }> {
  const dir = tempDir();
  const store = join(dir, "session.envelope");
  const record = join(dir, "session.aarl");
  const envelope = await EnvelopeStore.open(store, { segmentBytes: 256 * 1024 });
  let now = new Date("2019-05-01T00:00:00.000Z");
  const writer = await RecordWriter.open(record, { key: KEY, envelope, clock: () => now });
  const old: string[] = [];
  const fresh: string[] = [];
  for (let i = 0; i < OLD_CALLS + NEW_CALLS; i++) {
    if (i === OLD_CALLS) now = new Date("2026-05-01T00:00:00.000Z");
    const [request, response] = [value(`request-${i}`), value(`response-${i}`)];
    (i < OLD_CALLS ? old : fresh).push(request, response);
    const id = `c${i}`;
    await writer.beginCall({ call_id: id, tool_id: "fs.read", policy_set_hash: PolicySetHash.of("p"), request: new TextEncoder().encode(request) });
    await writer.endCall(id, {
      policy: { status: "allowed" },
      capability: { status: "denied", reason: "not evaluated" },
      execution: { status: "success" },
      decision_axes: {},
      response: new TextEncoder().encode(response),
    });
  }
  await writer.close();
  await envelope.close();
  return { store, record, old, fresh };
}

/** The CLI, SIGKILLed once it has printed `after` entries; or, if it finished first, its whole output. */
function expireUntilKilled(args: readonly string[], after: number): Promise<{ readonly lines: string[]; readonly killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, AEGIS_DEBUG: "" } });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      if (!killed && out.split("\n").length - 1 >= after) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL" && code !== 0) return reject(new Error(`expire exited ${String(code)}: ${err}`));
      // A line cut short by the kill was acknowledged to no one.
      resolve({ lines: out.split("\n").slice(0, -1), killed: signal === "SIGKILL" });
    });
  });
}

const expiredIn = (lines: readonly string[]): Set<string> => new Set(lines.flatMap((l) => /^expired ([0-9a-f]{64}) /.exec(l)?.[1] ?? []));
const holding = (store: string, text: string): string[] => readdirSync(store).filter((n) => readFileSync(join(store, n)).includes(Buffer.from(text)));

describe("aegis envelope expire killed at random points (SPEC §14.12)", () => {
  it(
    `[M14.15] ${ROUNDS} kills: every entry it printed is a tombstone with its bytes gone, the store stays consistent, and a second run finishes`,
    { timeout: 120_000 + ROUNDS * 30_000 },
    async () => {
      const random = seeded(SEED);
      let midway = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const at = `round ${round} (AEGIS_CRASH_SEED=${SEED})`;
        const f = await fixture();
        const args = ["envelope", "expire", "--envelope", f.store, "--before", "2020-01-01", "--record", f.record];
        const first = await expireUntilKilled(args, 1 + Math.floor(random() * (f.old.length - 40)));
        const printed = expiredIn(first.lines);
        if (first.killed && printed.size < f.old.length) midway++;

        // A reader changes nothing and already answers for what was printed.
        const reader = await openEnvelope(f.store);
        expect(
          reader.damage.filter((d) => d.code !== "torn_tail"),
          at,
        ).toEqual([]);
        for (const d of printed) expect(await reader.get(d as never), `${at}: ${d}`).toMatchObject({ code: "redacted", reason: "retention" });
        await reader.close();

        // The next writer recovers the dead one's lock and finishes an interrupted overwrite.
        const writer = await EnvelopeStore.open(f.store);
        if (first.killed) expect(writer.recoveredLock, at).toMatchObject({ code: "dead_holder" });
        for (const text of [...f.old, ...f.fresh]) {
          const read = await writer.get(sha256(text) as never);
          if (f.fresh.includes(text)) expect(read.code, `${at}: ${text.slice(0, 16)}`).toBe("present");
          else if (printed.has(sha256(text))) expect(read, at).toMatchObject({ code: "redacted", reason: "retention" });
          else expect(["present", "redacted"], at).toContain(read.code);
          if (read.code === "redacted") expect(read.reason, at).toBe("retention");
        }
        await writer.close();
        for (const text of f.old) if (printed.has(sha256(text))) expect(holding(f.store, text), at).toEqual([]);
        const check = await checkEnvelope(f.store);
        expect([check.mismatched, check.unscrubbed, check.damage], at).toEqual([[], [], []]);

        // Run again: it expires the rest, and counts what the first run did as already done.
        const second = aegis(args);
        expect(second.status, `${at}: ${second.stderr}`).toBe(0);
        const done = /; (\d+) already redacted, 0 not in the store$/m.exec(second.stdout);
        expect(expiredIn(second.stdout.split("\n")).size + Number(done?.[1]), at).toBe(f.old.length);
        const after = await openEnvelope(f.store);
        for (const text of f.old) expect(await after.get(sha256(text) as never), at).toMatchObject({ code: "redacted", reason: "retention" });
        for (const text of f.fresh) expect((await after.get(sha256(text) as never)).code, at).toBe("present");
        await after.close();
        for (const text of f.old) expect(holding(f.store, text), at).toEqual([]);
        expect(aegis(["verify", f.record]).status, at).toBe(0);
      }
      // Some kills must have landed part-way, or the test showed nothing.
      expect(midway, `AEGIS_CRASH_SEED=${SEED}`).toBeGreaterThan(0);
    },
  );
});
