import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { RecordWriter, PolicySetHash, RequestDigest, SigningKey, verifyRecord } from "@aegis/format";
import { EnvelopeError, EnvelopeStore, openEnvelope } from "@aegis/envelope";
import { parsePolicySet, recheck, type PolicySet } from "@aegis/policy";
import { entries } from "../src/show/entries-file.js";
import { STACK_TRACE, tempDir } from "./support.js";

/**
 * Hostile input as properties (issue 12): random bytes, and valid files with rows flipped,
 * deleted, duplicated, swapped and cut. Whatever the input: no exception escapes a reader
 * that promises an answer, the answer is one of the documented ones, and the same bytes
 * give the same answer. The Policy Set and bindings readers' property is policy's own
 * (packages/policy/test/hostile-text.test.ts).
 */
const RUNNER = fileURLToPath(new URL("./argv-runner.mjs", import.meta.url));
const SEED = Number(process.env["AEGIS_PROPERTY_SEED"] ?? Date.now() % 2 ** 31);
const KEY = SigningKey.fromSeed(new Uint8Array(32).fill(4));
let record: Buffer;
let rows: string[];
let policy: PolicySet;

beforeAll(async () => {
  const path = join(tempDir(), "valid.aarl");
  const writer = await RecordWriter.open(path, { key: KEY });
  for (const id of ["c1", "c2", "c3"]) {
    await writer.beginCall({ call_id: id, tool_id: "fs.read", policy_set_hash: PolicySetHash.of("p"), request_digest: RequestDigest.of(Buffer.from(id)) });
    await writer.endCall(id, {
      policy: { status: "allowed" },
      capability: { status: "denied", reason: "n/a" },
      execution: { status: "success" },
      decision_axes: {},
    });
  }
  await writer.close();
  record = (await import("node:fs")).readFileSync(path);
  rows = record.toString("utf8").split("\n").slice(0, -1);
  policy = parsePolicySet("version: 1\ndefault: deny\nrules:\n  - id: read\n    action: allow\n    tool: fs.read\n");
});

/** A valid record's rows mutated as an attacker or a failing disk would. */
const mutation = fc.oneof(
  fc.record({ op: fc.constant("flip" as const), row: fc.nat(), at: fc.nat(), to: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant("delete" as const), row: fc.nat() }),
  fc.record({ op: fc.constant("duplicate" as const), row: fc.nat() }),
  fc.record({ op: fc.constant("swap" as const), row: fc.nat(), with: fc.nat() }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({
    op: fc.constant("insert" as const),
    row: fc.nat(),
    text: fc.oneof(fc.string(), fc.constantFrom("\uFEFF", "\r", "\u0000", "{}", "[]", "null", '{"line_type":"open"}')),
  }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(mutations: readonly Mutation[]): Buffer {
  const r = [...rows];
  let tail: Buffer | undefined;
  for (const m of mutations) {
    const i = "row" in m ? m.row % Math.max(1, r.length) : 0;
    if (m.op === "flip") {
      const row = Buffer.from(r[i] ?? "");
      if (row.length > 0) row[m.at % row.length] = m.to;
      r[i] = row.toString("latin1");
    } else if (m.op === "delete") r.splice(i, 1);
    else if (m.op === "duplicate") r.splice(i, 0, r[i] ?? "");
    else if (m.op === "swap") {
      const j = m.with % Math.max(1, r.length);
      [r[i], r[j]] = [r[j] ?? "", r[i] ?? ""];
    } else if (m.op === "insert") r.splice(i, 0, m.text);
    else tail = Buffer.from(`${r.join("\n")}\n`).subarray(0, m.at % (record.length + 1));
  }
  return tail ?? Buffer.from(`${r.join("\n")}\n`, "latin1");
}

const hostileBytes = fc.oneof(
  fc.uint8Array({ maxLength: 4096 }).map((b) => Buffer.from(b)),
  fc.array(mutation, { minLength: 1, maxLength: 4 }).map(mutate),
);

describe("the verifier", () => {
  it("any bytes: a verdict, never an exception; the same bytes, the same verdict", async () => {
    await fc.assert(
      fc.asyncProperty(hostileBytes, async (bytes) => {
        const first = await verifyRecord({ bytes });
        expect(["verified", "tampered", "indeterminate"]).toContain(first.verdict.status);
        expect(await verifyRecord({ bytes: Buffer.from(bytes) })).toEqual(first);
      }),
      { numRuns: 400 },
    );
  });
});

describe("recheck and show's reader", () => {
  it("any bytes: verdicts and entries, never an exception", async () => {
    await fc.assert(
      fc.asyncProperty(hostileBytes, async (bytes) => {
        const path = join(tempDir(), "hostile.aarl");
        writeFileSync(path, bytes);
        const verdicts = [];
        for await (const v of recheck(path, { code: "policy", policy })) verdicts.push(v.code);
        for (const code of verdicts) expect(["unchanged", "newly_blocked", "newly_allowed", "newly_parked", "indeterminate"]).toContain(code);
        for await (const entry of entries(path, undefined)) expect(["session", "call", "decision", "close", "other", "unreadable"]).toContain(entry.kind);
      }),
      { numRuns: 100 },
    );
  });
});

describe("the Envelope reader", () => {
  it("any bytes as a pack, or as a store's segment: an EnvelopeError or a source whose answers are the documented ones", async () => {
    const dir = join(tempDir(), "store");
    const store = await EnvelopeStore.open(dir, { segmentBytes: 4096 });
    const digest = await store.putRequest(Buffer.from("a value"));
    await store.close();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), fc.boolean(), async (bytes, asPack) => {
        const path = join(tempDir(), "hostile.pack");
        if (asPack) writeFileSync(path, Buffer.concat([Buffer.from("AEGISPAK"), Buffer.from(bytes)]));
        else writeFileSync(join(dir, "00000002.seg"), bytes);
        let source;
        try {
          source = await openEnvelope(asPack ? path : dir);
        } catch (error) {
          expect(error).toBeInstanceOf(EnvelopeError);
          return;
        }
        try {
          expect(["present", "missing", "redacted", "digest_mismatch"]).toContain((await source.get(digest)).code);
          for await (const entry of source.entries()) expect(["present", "redacted"]).toContain(entry.code);
        } finally {
          await source.close();
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("every CLI argument", () => {
  const word = fc.oneof(
    fc.constantFrom("verify", "recheck", "show", "repair", "vectors", "envelope", "get", "--help"),
    fc.constantFrom("--json", "--key", "--policy", "--envelope", "--call", "--trust-store", "--policies", "--as-recorded", "--unverified-ok", "--", "-h"),
    fc.constantFrom("/dev/zero", "/dev/null", "/nonexistent", "/", ".", "", "\u0000", "x".repeat(5000), "ab".repeat(32)),
    fc.string({ maxLength: 20 }),
  );
  // Nothing that writes, waits on a socket or standard input, or starts a server.
  const harmless = fc.array(word, { maxLength: 6 }).filter((argv) => !argv.includes("-") && !argv.includes("repair"));

  it("random argument lists: an exit code and error/help lines, never a stack trace or a throw", () => {
    const lists = fc.sample(harmless, { numRuns: 200, seed: SEED });
    const run = spawnSync(process.execPath, [RUNNER], { input: JSON.stringify(lists), encoding: "utf8", timeout: 120_000, cwd: tempDir() });
    const results = JSON.parse(run.stdout) as { argv: string[]; code: number | string; stderr: string }[];
    expect(results).toHaveLength(lists.length);
    for (const r of results) {
      const at = `argv ${JSON.stringify(r.argv)} (seed ${SEED})`;
      expect([0, 1, 2, 3], at).toContain(r.code);
      expect(r.stderr, at).not.toMatch(STACK_TRACE);
      if (r.code !== 0 && r.code !== 3) expect(r.stderr, at).toMatch(/(^|\n)error: [^\n]*\nhelp: [^\n]*\n/);
    }
  });
});
