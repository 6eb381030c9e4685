import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RecordWriter, RequestDigest, ResponseDigest, SigningKey, repairTornTail, verifyRecord } from "@aegis/format";
import { openEnvelope } from "../src/index.js";
import { assertBuilt, runUntilKilled, seeded } from "./support/children.js";
import { tempDir } from "./support/stores.js";

const CHILD = fileURLToPath(new URL("./support/call-child.mjs", import.meta.url));
/** At least 50 kills in the default run; AEGIS_CRASH_ROUNDS=500 for a long one (README). */
const ROUNDS = Number(process.env["AEGIS_CRASH_ROUNDS"] ?? 50);
const SEED = Number(process.env["AEGIS_CRASH_SEED"] ?? Date.now() % 2 ** 31);

interface Row {
  readonly line_type: string;
  readonly call_id?: string;
  readonly request_digest?: string;
  readonly response_digest?: string;
  readonly prev_session_tail?: string;
}

/** The whole rows of the record (a torn last row is not a Line), by call and type. */
function rowsOf(path: string): Row[] {
  const rows: Row[] = [];
  for (const text of readFileSync(path, "utf8").split("\n")) {
    try {
      rows.push(JSON.parse(text) as Row);
    } catch {
      // The torn last row, or the blank after the last newline.
    }
  }
  return rows;
}

describe("a recording runtime killed at random points, with an Envelope (issue 12)", () => {
  it(
    `${ROUNDS} SIGKILLs: never Tampered, nothing acknowledged lost, each reopening chained to the old tail, Verified after a clean close`,
    { timeout: 60_000 + ROUNDS * 10_000 },
    async () => {
      assertBuilt("format", "envelope");
      const dir = tempDir();
      const record = join(dir, "run.aarl");
      const store = join(dir, "run.envelope");
      const random = seeded(SEED);
      const acknowledged = { intents: new Set<string>(), outcomes: new Set<string>() };
      let opens = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const at = `round ${round} (AEGIS_CRASH_SEED=${SEED})`;
        // Kill after 1 to 60 acknowledged Lines: before the first call, mid-call, between calls.
        const target = 1 + Math.floor(random() * 60);
        const lines = await runUntilKilled(CHILD, [record, store, String(round)], (_line, count) => count >= target);
        expect(lines[0], at).toMatch(/^open [0-9a-f]{64}$/);
        opens++;
        for (const line of lines.slice(1)) {
          const [kind, callId] = line.split(" ");
          if (kind === "intent" && callId !== undefined) acknowledged.intents.add(callId);
          if (kind === "outcome" && callId !== undefined) acknowledged.outcomes.add(callId);
        }

        // The killed writer's locks are left; the next round's writer must recover them.
        expect(existsSync(`${record}.lock`) && existsSync(join(store, "writer.lock")), at).toBe(true);
        const verdict = (await verifyRecord({ path: record })).verdict;
        expect(verdict.status, `${at}: ${JSON.stringify(verdict)}`).not.toBe("tampered");
        const rows = rowsOf(record);
        const intents = new Map(rows.filter((r) => r.line_type === "intent").map((r) => [r.call_id, r]));
        const outcomes = new Map(rows.filter((r) => r.line_type === "outcome").map((r) => [r.call_id, r]));
        expect(rows.filter((r) => r.line_type === "open").length, at).toBe(opens);
        const reader = await openEnvelope(store);
        for (const callId of acknowledged.intents) {
          const intent = intents.get(callId);
          expect(intent, `${at}: acknowledged intent ${callId}`).toBeDefined();
          expect((await reader.get(RequestDigest.parse(intent?.request_digest ?? ""))).code, `${at}: request of ${callId}`).toBe("present");
        }
        for (const callId of acknowledged.outcomes) {
          const outcome = outcomes.get(callId);
          expect(outcome, `${at}: acknowledged outcome ${callId}`).toBeDefined();
          expect((await reader.get(ResponseDigest.parse(outcome?.response_digest ?? ""))).code, `${at}: response of ${callId}`).toBe("present");
        }
        await reader.close();
      }

      // A last, clean Session: the whole file, every killed Session in it, verifies.
      await repairTornTail(record);
      const writer = await RecordWriter.open(record, { key: SigningKey.fromSeed(new Uint8Array(32).fill(7)) });
      await writer.close();
      const final = await verifyRecord({ path: record });
      expect(final.verdict, `AEGIS_CRASH_SEED=${SEED}`).toEqual({ status: "verified" });
      expect(final.sessions).toBe(ROUNDS + 1);
      // Every open after the first names the tail it continues (SPEC §7).
      const opensInFile = rowsOf(record).filter((r) => r.line_type === "open");
      expect(opensInFile.slice(1).every((o) => typeof o.prev_session_tail === "string")).toBe(true);
    },
  );
});
