import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GOLDEN, aegisBounded, tempDir } from "./support.js";

/**
 * Issue 31, ADR 0027 point 7: a row thread answers some 130 bytes a row whatever the row's
 * size, so a piece of 256 KiB of two-byte rows answered 16 MB, and the pieces in flight of a
 * hostile record took `aegis verify --threads 15` to 220 MB where `--threads 0` took 83 MB.
 * A thread now reads no more than a row for each 64 bytes of its piece. The verdict is the
 * sequential walk's, and memory stays within what the started threads' own isolates add.
 */
/** A started thread's isolate, before and while it reads: some 8 MiB idle, a few more at work (as verify-memory.test.ts). */
const PER_THREAD_MIB = 16;
/** What else may differ between two runs of the same process: the collector's timing. */
const SLACK_MIB = 16;

describe("aegis verify --threads 15 on a record of tiny rows", () => {
  it("a signed Session, then 8 MB of rows `1`: the verdict of --threads 0, in the memory of --threads 0 and the threads' isolates", () => {
    const path = join(tempDir(), "tiny-rows.aarl");
    // Over 4 MiB, so the split walk reads it; 32 pieces, each of 131,072 rows.
    writeFileSync(path, Buffer.concat([readFileSync(GOLDEN), Buffer.from("1\n".repeat(4 << 20))]));
    const sequential = aegisBounded(["verify", "--threads", "0", "--json", path]);
    const split = aegisBounded(["verify", "--threads", "15", "--json", path]);
    expect(sequential.status).toBe(1);
    // The golden Session is 12 Lines: the walk stops at the first `1`.
    expect(JSON.parse(sequential.stdout)).toMatchObject({ verdict: "tampered", reason: { code: "malformed_line", line: 13, detail: "no line_type" } });
    expect(split.stdout).toBe(sequential.stdout);
    expect(split.stderr).toBe(sequential.stderr);
    expect(split.status).toBe(sequential.status);
    const started = Math.min(15, availableParallelism());
    expect(split.peakMiB - sequential.peakMiB, `--threads 0: ${sequential.peakMiB} MiB; --threads 15 (${started} started): ${split.peakMiB} MiB`).toBeLessThan(
      started * PER_THREAD_MIB + SLACK_MIB,
    );
  }, 60_000);
});
