import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { RecordWriter, PolicySetHash, RequestDigest } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { EnvelopeStore } from "@aegis/envelope";
import { GOLDEN, ROOT, STACK_TRACE, aegisBounded, tempDir } from "./support.js";

/**
 * SPEC §18, ADR 0017: a file aegis finds for itself (an Envelope's segment, index or lock, a
 * record's lock, a record found by walking a directory) is opened only when it is a regular
 * file. A FIFO in its place is refused at once, never waited on: every run here is bounded,
 * and `aegisBounded` fails the test, rather than hanging, if the CLI blocks.
 */

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const requestOf = (i: number): string => `{"call":${i},"padding":"${"x".repeat(120)}"}`;

interface Fixture {
  readonly dir: string;
  readonly record: string;
  readonly store: string;
}

/** Three calls with their bytes kept, in a store whose small segments hold about one call each. */
async function writeFixture(): Promise<Fixture> {
  const dir = tempDir();
  const record = join(dir, "session.aarl");
  const store = join(dir, "session.envelope");
  const envelope = await EnvelopeStore.open(store, { segmentBytes: 400 });
  const writer = await RecordWriter.open(record, { key: insecureDevKey(), allowInsecureDevKey: true, envelope });
  for (const i of [1, 2, 3]) {
    await writer.beginCall({ call_id: `c${i}`, tool_id: "t", policy_set_hash: PolicySetHash.of("p"), request: text(requestOf(i)) });
    await writer.endCall(`c${i}`, {
      policy: { status: "allowed" },
      capability: { status: "denied", reason: "not evaluated" },
      execution: { status: "success" },
      decision_axes: {},
      response: text(`answer ${i}`),
    });
  }
  await writer.close();
  await envelope.close();
  return { dir, record, store };
}

function mkfifo(path: string): void {
  const made = spawnSync("mkfifo", [path], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`mkfifo ${path}: ${made.stderr}`);
}

/** Put a FIFO (or a directory) where the first segment was. */
function replaceFirstSegment(store: string, kind: "fifo" | "directory"): string {
  const segment = join(store, "00000001.seg");
  rmSync(segment);
  if (kind === "fifo") mkfifo(segment);
  else mkdirSync(segment);
  return segment;
}

const NOT_REGULAR = (path: string, what: string): RegExp =>
  new RegExp(`^error: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is not a regular file \\(${what}\\): it was not read, and its entries are lost$`, "m");

describe("a segment that is not a regular file is refused, not waited on (SPEC §14.7, §18)", () => {
  it.each([
    ["fifo", "a FIFO \\(named pipe\\)"],
    ["directory", "a directory"],
  ] as const)("envelope verify, with and without --full: a %s in place of a segment is damage; the other segments are read; exit 2", async (kind, what) => {
    const f = await writeFixture();
    expect(readdirSync(f.store).filter((n) => n.endsWith(".seg")).length).toBeGreaterThan(1);
    const segment = replaceFirstSegment(f.store, kind);
    for (const full of [[], ["--full"]]) {
      const run = aegisBounded(["envelope", "verify", ...full, "--envelope", f.store, f.record], { timeoutMs: 60_000 });
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(NOT_REGULAR(segment, what));
      expect(run.stderr).toMatch(/^help: /m);
      expect(run.stderr).not.toMatch(STACK_TRACE);
      // The first call's request was in that segment; the last call's bytes were not.
      expect(run.stdout).toContain(`request ${RequestDigest.of(text(requestOf(1)))}: missing`);
      expect(run.stdout).toMatch(new RegExp(`request ${RequestDigest.of(text(requestOf(3)))}: present`));
    }
    const full = aegisBounded(["envelope", "verify", "--full", "--envelope", f.store, f.record], { timeoutMs: 60_000 });
    expect(full.stdout).toMatch(new RegExp(NOT_REGULAR(segment, what).source.replace("^error: ", "^full: "), "m"));
  });

  it("envelope get: the FIFO is reported and passed over; a digest it held is missing (exit 1), one elsewhere is served (exit 0)", async () => {
    const f = await writeFixture();
    const segment = replaceFirstSegment(f.store, "fifo");
    const lost = aegisBounded(["envelope", "get", "--envelope", f.store, RequestDigest.of(text(requestOf(1)))], { timeoutMs: 60_000 });
    expect(lost.stderr).toMatch(NOT_REGULAR(segment, "a FIFO \\(named pipe\\)"));
    expect(lost.stderr).toMatch(/^error: missing: [0-9a-f]{64}: /m);
    expect(lost.stderr).toMatch(/^help: /m);
    expect(lost.status).toBe(1);
    const kept = aegisBounded(["envelope", "get", "--envelope", f.store, RequestDigest.of(text(requestOf(3)))], { timeoutMs: 60_000 });
    expect(kept.stdout).toBe(requestOf(3));
    expect(kept.status).toBe(0);
  });

  it("verify --envelope: the FIFO is said on stderr; the verdict and its exit code stand", async () => {
    const f = await writeFixture();
    const segment = replaceFirstSegment(f.store, "fifo");
    const run = aegisBounded(["verify", "--envelope", f.store, f.record], { timeoutMs: 60_000 });
    expect(run.stdout).toMatch(/^Verified \(unpinned\)\n/);
    expect(run.stderr).toMatch(NOT_REGULAR(segment, "a FIFO \\(named pipe\\)"));
    expect(run.status).toBe(0);
  });

  it("an index that is a FIFO is not used: its segment is scanned, and every entry is served", async () => {
    const f = await writeFixture();
    const index = join(f.store, "00000001.idx");
    rmSync(index);
    mkfifo(index);
    const run = aegisBounded(["envelope", "verify", "--envelope", f.store, f.record], { timeoutMs: 60_000 });
    expect(run.stderr).toContain(`note: ${index}: index not used (not a regular file (a FIFO (named pipe)))`);
    expect(run.stdout).toContain("6 present, 0 missing");
    expect(run.status).toBe(0);
  });
});

describe("a lock that is a FIFO is no lock: recovered, not waited on (SPEC §13.3, §18)", () => {
  it("the store's writer.lock: envelope redact takes the store and redacts", async () => {
    const f = await writeFixture();
    mkfifo(join(f.store, "writer.lock"));
    const digest = RequestDigest.of(text(requestOf(2)));
    const run = aegisBounded(["envelope", "redact", "--envelope", f.store, "--reason", "test", digest], { timeoutMs: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const get = aegisBounded(["envelope", "get", "--envelope", f.store, digest], { timeoutMs: 60_000 });
    expect(get.stderr).toMatch(/^error: redacted: /m);
  });

  it("a record's lock: repair takes the record and repairs it", async () => {
    const dir = tempDir();
    const record = join(dir, "torn.aarl");
    writeFileSync(record, `${readFileSync(GOLDEN, "utf8")}{"torn":`);
    mkfifo(`${record}.lock`);
    const run = aegisBounded(["repair", record], { timeoutMs: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^repaired /);
  });
});

/** An ES module run by Node against the built packages (`@format/internal`, `@envelope`), bounded: a hang fails the test. */
function runModule(source: string): { status: number | null; stdout: string; stderr: string } {
  const file = join(tempDir(), "run.mjs");
  const dist = (name: string, entry = "index"): string => JSON.stringify(pathToFileURL(join(ROOT, `packages/${name}/dist/${entry}.js`)).href);
  writeFileSync(file, source.replaceAll('"@format/internal"', dist("format", "internal")).replaceAll('"@envelope"', dist("envelope")));
  const r = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 60_000 });
  if (r.error !== undefined) throw new Error(`the module did not finish by itself: ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("files found, not named, are regular files (SPEC §18)", () => {
  it("verifyRecordFiles with regularOnly: a FIFO is answered unreadable at once, on a thread and on this one; a named FIFO is read as a pipe", () => {
    const dir = tempDir();
    const fifo = join(dir, "found.aarl");
    mkfifo(fifo);
    const run = runModule(`
      import { verifyRecordFiles } from "@format/internal";
      for (const threads of [0, 1]) {
        for await (const answer of verifyRecordFiles([${JSON.stringify(fifo)}, ${JSON.stringify(GOLDEN)}], { threads, regularOnly: () => true })) {
          console.log(threads, answer.code, answer.code === "unreadable" ? answer.detail : answer.verification.verdict.status);
        }
      }
    `);
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(
      [
        "0 unreadable not a regular file (a FIFO (named pipe))",
        "0 checked verified",
        "1 unreadable not a regular file (a FIFO (named pipe))",
        "1 checked verified",
        "",
      ].join("\n"),
    );
    // Named, the same FIFO is a pipe: read once, streaming, with a writer at its other end.
    const named = spawnSync(
      "/bin/sh",
      ["-c", `cat '${GOLDEN}' > '${fifo}' & exec '${process.execPath}' '${join(ROOT, "packages/cli/bin/aegis.js")}' verify '${GOLDEN}' '${fifo}'`],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(named.stdout).toContain(`==> ${fifo} <==\nVerified (unpinned)\n`);
    expect(named.status).toBe(0);
  });

  it("checkEnvelope and openEnvelope refuse a FIFO as not_an_envelope without opening it", () => {
    const dir = tempDir();
    const fifo = join(dir, "handed.pack");
    mkfifo(fifo);
    const run = runModule(`
      import { checkEnvelope, openEnvelope } from "@envelope";
      for (const open of [checkEnvelope, openEnvelope]) {
        try { await open(${JSON.stringify(fifo)}); console.log("opened"); } catch (error) { console.log(error.fault.code, error.fault.detail); }
      }
    `);
    expect(run.stdout).toBe(
      "not_an_envelope a FIFO (named pipe), neither a store directory nor a pack file\nnot_an_envelope neither a directory nor a regular file\n",
    );
  });
});
