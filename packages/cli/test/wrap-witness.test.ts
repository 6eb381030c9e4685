import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { aegis, BIN, ROOT, tempDir } from "./support.js";
import { startWitness, witnessKey } from "./witness-support.js";

/**
 * `aegis wrap --checkpoints --witness` (SPEC §19.6) in front of a real server, pushing to a
 * real witness process: after the client hangs up the witness holds the record's size and the
 * sidecar carries its cosignature; SIGKILLed and started again, wrap resumes from the size
 * it kept for the witness, and no evidence is ever said against an honest record.
 */
const MIRROR = join(ROOT, "packages/mcp/test/fixtures/mirror-server.mjs");
const ORIGIN = "agent.example/run";
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

/** wrap, relaying to the mirror server; `call(i)` makes call i and waits for its answer. */
function wrap(args: readonly string[]): {
  child: ChildProcessWithoutNullStreams;
  call: (i: number) => Promise<void>;
  stderr: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [BIN, "wrap", ...args, "--", process.execPath, MIRROR], {
    env: { ...process.env, AEGIS_DEBUG: "", MIRROR_QUIET: "1" },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdin.write(`${INIT}\n`);
  const call = async (i: number): Promise<void> => {
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { i } } })}\n`);
    const deadline = Date.now() + 30_000;
    while (!out.includes(`"id":${i},`)) {
      if (Date.now() > deadline) throw new Error(`no answer to call ${i}: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, call, stderr: () => err, exited };
}

const held = (state: string): number =>
  (JSON.parse(readFileSync(join(state, "state.json"), "utf8")) as { origins: Record<string, { size: number }> }).origins[ORIGIN]?.size ?? 0;
const lines = (path: string): number =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "").length;

describe("aegis wrap --checkpoints --witness", () => {
  it("[M19.2] pushes as it records; after a hang-up the witness holds the record's size and the sidecar its cosignature; SIGKILLed, it resumes", async () => {
    const dir = tempDir();
    const signingKey = join(dir, "signing.key");
    const made = aegis(["keygen", "--out", signingKey]);
    const publicKey = /^public_key ([0-9a-f]{64})$/m.exec(made.stdout)?.[1] ?? "";
    const { key } = witnessKey(dir, "witness.example/wrap");
    const state = join(dir, "witness");
    const witness = await startWitness(key, [`${ORIGIN}=${publicKey}`], state);
    const audit = join(dir, "session.aarl");
    const args = ["--audit", audit, "--signing-key", signingKey, "--checkpoints", "--origin", ORIGIN, "--witness", `${witness.vkey}@${witness.url}`];
    try {
      const first = wrap(args);
      for (let i = 1; i <= 3; i++) await first.call(i);
      first.child.stdin.end();
      expect(await first.exited, first.stderr()).toBe(0);
      expect(held(state)).toBe(lines(audit));
      const sidecar = readFileSync(`${audit}.checkpoint`, "utf8");
      expect(sidecar).toMatch(/^\u2014 witness\.example\/wrap \S+$/m);
      const verified = aegis(["verify", "--checkpoint", `${audit}.checkpoint`, "--witness", witness.vkey, "--min-witnesses", "1", audit]);
      expect(verified.status, verified.stdout).toBe(0);

      // Killed at once, no close: what it kept for the witness is what the witness holds, or behind it.
      const second = wrap(args);
      for (let i = 1; i <= 4; i++) await second.call(i);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      second.child.kill("SIGKILL");
      await second.exited;
      const kept = (JSON.parse(readFileSync(`${audit}.witnesses`, "utf8")) as { cosigned: Record<string, number> }).cosigned;
      expect(Object.values(kept)).toHaveLength(1);
      expect(Object.values(kept)[0]).toBe(held(state));

      const third = wrap(args);
      for (let i = 1; i <= 2; i++) await third.call(i);
      third.child.stdin.end();
      expect(await third.exited).toBe(0);
      expect(held(state)).toBe(lines(audit));
      for (const run of [first, second, third]) expect(run.stderr()).not.toMatch(/witness .*: it (holds|refused|cosigned)/);
      expect(aegis(["verify", "--checkpoint", `${audit}.checkpoint`, "--witness", witness.vkey, "--min-witnesses", "1", audit]).status).toBe(0);
    } finally {
      witness.child.kill("SIGTERM");
      await witness.exited;
    }
  }, 120_000);
});
