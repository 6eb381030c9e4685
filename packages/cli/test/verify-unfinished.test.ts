import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, STACK_TRACE, aegis, tempDir } from "./support.js";

/**
 * SPEC §13.4 `unfinished_calls`, end to end: the real `aegis wrap` over a server that never
 * answers one call is killed with SIGKILL once that call's intent is durable, started again
 * on the same record and ended cleanly; `aegis verify` then says Verified on stdout, as the
 * reference would, and names the call that never finished on stderr and in `--json`.
 */

/** The relay tests' fixture server: it answers every tools/call but one named `never`. */
const MIRROR = join(ROOT, "packages/mcp/test/fixtures/mirror-server.mjs");

type Line = Record<string, unknown>;

function linesOf(path: string): Line[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((row) => row.trim() !== "")
    .flatMap((row) => {
      try {
        return [JSON.parse(row) as Line];
      } catch {
        return []; // a row being written
      }
    });
}

/** Waits for `ready()` to hold, looking every 50 ms (a file has no event to wait on); fails past the bound. */
async function until(ready: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `aegis wrap` over the mirror server, driven as an MCP client drives it. */
class Wrap {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private out = "";
  private err = "";

  constructor(audit: string, key: string) {
    this.child = spawn(process.execPath, [BIN, "wrap", "--audit", audit, "--signing-key", key, "--", process.execPath, MIRROR], {
      stdio: "pipe",
      env: { ...process.env, AEGIS_DEBUG: "", MIRROR_QUIET: "1" },
    });
    this.exit = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.child.stdout.on("data", (chunk: Buffer) => (this.out += chunk.toString("utf8")));
    this.child.stderr.on("data", (chunk: Buffer) => (this.err += chunk.toString("utf8")));
    this.child.stdin.on("error", () => undefined);
  }

  call(id: number, name: string): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: { text: "hi" } } })}\n`);
  }

  async answered(id: number): Promise<void> {
    await until(
      () =>
        this.out
          .split("\n")
          .filter((f) => f !== "")
          .some((f) => (JSON.parse(f) as { id?: unknown }).id === id),
      `the answer to request ${id}; wrap's stderr: ${this.err}`,
    );
  }
}

const lineOf = (audit: string, type: string, callId: string) => (): boolean => linesOf(audit).some((l) => l["line_type"] === type && l["call_id"] === callId);

describe("aegis verify after aegis wrap was killed and started again (SPEC §13.4)", () => {
  it("stdout is the reference's Verified, stderr and --json name the call that never finished", async () => {
    const dir = tempDir();
    const key = join(dir, "signing.key");
    const keygen = aegis(["keygen", "--out", key]);
    expect(keygen.status).toBe(0);
    const keyId = /^key_id ([0-9a-f]{64})$/m.exec(keygen.stdout)?.[1];
    const audit = join(dir, "session.aarl");

    // Session 0 (wrap numbers its calls from 1): call-1 answered; call-2 ("never") waits;
    // call-3 answered after it, so a signed outcome covers call-2's intent. Then SIGKILL:
    // no close, and no outcome for call-2.
    const first = new Wrap(audit, key);
    first.call(1, "echo");
    await first.answered(1);
    await until(lineOf(audit, "outcome", "call-1"), "call-1's outcome in the record");
    first.call(2, "never");
    await until(lineOf(audit, "intent", "call-2"), "call-2's intent in the record");
    first.call(3, "echo");
    await first.answered(3);
    await until(lineOf(audit, "outcome", "call-3"), "call-3's outcome in the record");
    first.child.kill("SIGKILL");
    expect((await first.exit).signal).toBe("SIGKILL");
    expect(linesOf(audit).map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "intent", "intent", "outcome"]);

    // Session 1: started again on the same record, the client hangs up, the Session closes.
    const second = new Wrap(audit, key);
    second.child.stdin.end();
    await second.exit;
    const lines = linesOf(audit);
    const last = lines.at(-1);
    expect(last?.["line_type"]).toBe("close");
    expect(lines.filter((l) => l["line_type"] === "open")).toHaveLength(2);

    const expectedStdout = `Verified (unpinned)\nkey_id ${keyId}\ncoverage session 1 seq ${String(last?.["seq"])}\n`;
    const expectedStderr = "aegis verify: 1 call never finished before its Session ended (session 0: call-2); `aegis show` lists it\n";
    for (const threads of [[], ["--threads", "0"], ["--threads", "1"], ["--threads", "4"]]) {
      const text = aegis(["verify", ...threads, audit]);
      expect(text.status, threads.join(" ")).toBe(0);
      expect(text.stdout, threads.join(" ")).toBe(expectedStdout);
      expect(text.stderr, threads.join(" ")).toBe(expectedStderr);

      const json = aegis(["verify", "--json", ...threads, audit]);
      expect(json.status).toBe(0);
      const doc = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(doc["verdict"]).toBe("verified");
      expect(doc["in_flight"]).toEqual([]);
      expect(doc["unfinished_calls"]).toEqual({ count: 1, calls: [{ session_index: 0, call_id: "call-2" }] });
      expect(json.stderr).toBe(expectedStderr);
    }

    // Pinned, the same: the key changes the verdict line only.
    const pinned = aegis(["verify", "--key", /^public_key ([0-9a-f]{64})$/m.exec(keygen.stdout)?.[1] ?? "", audit]);
    expect(pinned.status).toBe(0);
    expect(pinned.stdout).toBe(expectedStdout.replace("Verified (unpinned)", `Verified (pinned to ${keyId})`));
    expect(pinned.stderr).toBe(expectedStderr);

    // Several records: each answered as alone; the stderr line names its record.
    const many = aegis(["verify", "--threads", "2", audit, audit]);
    expect(many.status).toBe(0);
    expect(many.stdout).toBe(
      `==> ${audit} <==\n${expectedStdout}\n==> ${audit} <==\n${expectedStdout}\nsummary: 2 records: 2 verified, 0 tampered, 0 indeterminate, 0 unreadable\n`,
    );
    expect(many.stderr).toBe(`${expectedStderr.replace("aegis verify: ", `aegis verify: ${audit}: `)}`.repeat(2));
    const jsonLines = aegis(["verify", "--json", "--threads", "0", audit, audit]);
    const docs = jsonLines.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(docs.map((d) => d["unfinished_calls"])).toEqual([
      { count: 1, calls: [{ session_index: 0, call_id: "call-2" }] },
      { count: 1, calls: [{ session_index: 0, call_id: "call-2" }] },
    ]);

    // What the line points at: show lists the call with no outcome.
    const show = aegis(["show", audit]);
    expect(show.stdout).toMatch(/call call-2 {2}never[\s\S]*?outcome {5}none: the call was in flight when this Session ended/);
    for (const run of [many, jsonLines, show]) expect(run.stderr).not.toMatch(STACK_TRACE);
  }, 180_000);
});
