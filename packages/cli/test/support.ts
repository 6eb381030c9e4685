import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const BIN = join(ROOT, "packages/cli/bin/aegis.js");
/** The CLI from the packages' modules, a file each: the module graph the bin's one file follows (ADR 0045). */
export const UNBUNDLED = join(ROOT, "packages/cli/test/support/unbundled-cli.mjs");
export const vector = (relative: string): string => join(ROOT, "vectors", relative);
export const GOLDEN = vector("external/rust-aegis/golden-session.aarl");
export const GOLDEN_PUBLIC_KEY = "3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c";
export const GOLDEN_KEY_ID = "77a2c2f5952039243c043b69e7e812a2deb69e3271adb3013b8f24d3b8ea40f6";

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real CLI, as a child process, the way a CI gate runs it. */
export function aegis(args: readonly string[], options: { cwd?: string } = {}): Run {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    encoding: "utf8",
    env: { ...process.env, AEGIS_DEBUG: "" },
    maxBuffer: 1 << 28,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface BoundedRun extends Run {
  /** Peak resident memory of the CLI process, in MiB. */
  readonly peakMiB: number;
}

const BOUNDED = join(ROOT, "packages/cli/test/bounded-cli.mjs");

/**
 * The real CLI with a bound on its time (a hang fails the test, it does not stall the
 * suite) and a report of its peak memory. `input` is written to its standard input.
 */
export function aegisBounded(args: readonly string[], options: { timeoutMs?: number; input?: string | Buffer; maxOldSpaceMiB?: number } = {}): BoundedRun {
  const heap = options.maxOldSpaceMiB === undefined ? [] : [`--max-old-space-size=${options.maxOldSpaceMiB}`];
  const result = spawnSync(process.execPath, [...heap, BOUNDED, ...args], {
    cwd: ROOT,
    env: { ...process.env, AEGIS_DEBUG: "" },
    stdio: ["pipe", "pipe", "pipe", "pipe"],
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 512 * 1024 * 1024,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  if (result.error !== undefined) throw new Error(`aegis ${args.join(" ")}: ${result.error.message} (killed by ${String(result.signal)})`);
  const text = (fd: number): string => result.output[fd]?.toString("utf8") ?? "";
  return { status: result.status, stdout: text(1), stderr: text(2), peakMiB: Number(text(3)) / 1024 };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "aegis-cli-"));
}

/** A stack trace printed to a user looks like this; none may ever appear. */
export const STACK_TRACE = /^\s+at .+\(.+:\d+:\d+\)$|^\s+at .+:\d+:\d+$/m;

/**
 * A valid record of `lines` Lines (half of them signed outcomes), written without the
 * writer's fsyncs. The same key signs every one, so a length's bytes never change: each
 * length is made once a test run, in the run's scratch directory (test/support/scratch.ts),
 * and copied to `path` after that (several test files ask for 34,000 or 40,000 Lines, some
 * twice, and making one costs seconds).
 */
export async function largeRecord(path: string, lines: number): Promise<void> {
  const made = join(tmpdir(), `aegis-large-record-${lines}.aarl`);
  if (!existsSync(made)) {
    const writing = `${made}.${process.pid}`;
    await writeLargeRecord(writing, lines);
    // Another test file may be making the same: either's bytes are these.
    renameSync(writing, made);
  }
  copyFileSync(made, path);
}

async function writeLargeRecord(path: string, lines: number): Promise<void> {
  const { PrevHash, PolicySetHash, RequestDigest, SigningKey } = await import("@aegis/format");
  const { sealLine } = await import("@aegis/format/internal");
  const { createWriteStream } = await import("node:fs");
  const key = SigningKey.fromSeed(new Uint8Array(32).fill(5));
  const out = createWriteStream(path);
  let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
  const chunks: string[] = [tail.text];
  for (let seq = 1; seq < lines - 1; seq++) {
    const base = {
      schema_version: 2,
      seq,
      prev_hash: PrevHash.after(tail.lineHash),
      // Intent at odd seq, its outcome at the next: one call per pair.
      call_id: `call-${(seq - 1) >> 1}`,
      tool_id: "fs.read",
      request_digest: RequestDigest.of(Buffer.from(`r${(seq - 1) >> 1}`)),
    };
    tail =
      seq % 2 === 1
        ? sealLine({ ...base, line_type: "intent" })
        : sealLine(
            {
              ...base,
              line_type: "outcome",
              policy_set_hash: PolicySetHash.of("p"),
              policy: { status: "allowed" },
              capability: { status: "denied", reason: "not evaluated" },
              execution: { status: "success" },
              decision_axes: { capability: "fs.read", matched_rule: "allow", fs: { path_raw: "./notes.md", path_canonical: "/workspace/notes.md" } },
            },
            key,
          );
    chunks.push(tail.text);
  }
  chunks.push(sealLine({ schema_version: 2, line_type: "close", seq: lines - 1, prev_hash: PrevHash.after(tail.lineHash) }, key).text);
  await new Promise<void>((resolve, reject) => out.end(`${chunks.join("\n")}\n`, () => resolve()).on("error", reject));
}
