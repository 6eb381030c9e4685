import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { PrevHash, RequestDigest, SigningKey } from "../src/index.js";
import { sealLine } from "../src/internal.js";
import { outcome, tempDir } from "./support/chains.js";

/**
 * Issue 31, ADR 0027: the split walk's memory does not follow `--threads`. What is in
 * flight is one budget shared by every thread, and no more row threads start than there
 * are cores; all that may grow with the count is each started thread's own isolate.
 * Measured as the kernel measures it (peak RSS of a child process, its threads included),
 * on a record of 100,000 Lines.
 */
const CHILD = fileURLToPath(new URL("./support/verify-rss-child.mjs", import.meta.url));
/** A started thread's isolate, before and while it reads: some 8 MiB idle, a few more at work. */
const PER_THREAD_KIB = 16 * 1024;
/** What else may differ between two runs of the same process: the collector's timing. */
const SLACK_KIB = 16 * 1024;

interface Measured {
  readonly verdict: string;
  readonly started: number;
  readonly maxRssKiB: number;
}

function measure(path: string, threads: number): Measured {
  return JSON.parse(execFileSync(process.execPath, [CHILD, path, String(threads)], { encoding: "utf8" })) as Measured;
}

describe("peak RSS of verify --threads N", () => {
  let path: string;

  beforeAll(() => {
    // One Session of 100,000 Lines, every other one signed, as a relay writes them.
    path = join(tempDir(), "hundred-thousand.aarl");
    const key = SigningKey.generate();
    const rows: string[] = [];
    let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
    rows.push(tail.text);
    for (let seq = 1; seq < 100_000; seq++) {
      const id = `call-${seq >> 1}`;
      const line =
        seq % 2 === 1
          ? {
              schema_version: 2,
              line_type: "intent",
              seq,
              prev_hash: PrevHash.after(tail.lineHash),
              call_id: id,
              tool_id: "fs.read",
              request_digest: RequestDigest.of(Buffer.from(id)),
            }
          : { ...outcome(id), schema_version: 2, line_type: "outcome", seq, prev_hash: PrevHash.after(tail.lineHash) };
      tail = sealLine(line, seq % 2 === 1 ? undefined : key);
      rows.push(tail.text);
    }
    writeFileSync(path, `${rows.join("\n")}\n`);
  }, 300_000);

  it("does not grow from 1 to 8 threads but by the threads' own isolates, and stays under 150 MB", () => {
    const one = measure(path, 1);
    const eight = measure(path, 8);
    // The record ends without a close: every Line links and is signed, the last call in flight.
    for (const m of [one, eight]) expect(m.verdict).toMatch(/^Indeterminate: session 0 has no close/);
    const margin = (eight.started - one.started) * PER_THREAD_KIB + SLACK_KIB;
    expect(eight.maxRssKiB - one.maxRssKiB, `1 thread: ${one.maxRssKiB} KiB; 8 threads (${eight.started} started): ${eight.maxRssKiB} KiB`).toBeLessThan(
      margin,
    );
    for (const m of [one, eight]) expect(m.maxRssKiB * 1024).toBeLessThan(150e6);
  }, 600_000);
});
