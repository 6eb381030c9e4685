import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RecordWriter, RequestDigest } from "../src/index.js";
import { DEV, POLICY, readLines, tempDir } from "./support/chains.js";
import { verifyChainFile } from "../src/verify/verify-record.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";

const CHILD = fileURLToPath(new URL("./support/append-child.mjs", import.meta.url));

/** Start the child; resolve with its first line of output and a way to end it. */
function start(mode: "open" | "append", path: string): Promise<{ readonly first: string; readonly stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, mode, path], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const exited = new Promise<void>((done) => child.on("exit", () => done()));
    const stop = async (): Promise<void> => {
      child.kill("SIGKILL");
      await exited;
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline !== -1) resolve({ first: out.slice(0, newline), stop });
    });
    child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()));
    child.on("error", reject);
    void exited.then(() => {
      if (!out.includes("\n")) reject(new Error(`the child ended without a word: ${err}`));
    });
  });
}

describe("load (issue 12)", () => {
  it("64 callers x 1,000 calls through one writer: one unforked chain, every call whole", { timeout: 300_000 }, async () => {
    const path = join(tempDir(), "load.aarl");
    const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
    const caller = async (c: number): Promise<void> => {
      for (let i = 0; i < 1000; i++) {
        const call_id = `c${c}-${i}`;
        await writer.beginCall({ call_id, tool_id: "fs.read", policy_set_hash: POLICY, request_digest: RequestDigest.of(Buffer.from(call_id)) });
        await writer.endCall(call_id, {
          policy: { status: "allowed" },
          capability: { status: "denied", reason: "n/a" },
          execution: { status: "success" },
          decision_axes: {},
        });
      }
    };
    await Promise.all(Array.from({ length: 64 }, (_, c) => caller(c)));
    await writer.close();
    const result = await verifyChainFile(path);
    expect(result.verdict).toEqual({ status: "verified" });
    expect(result.lines).toBe(2 + 2 * 64_000);
    const lines = readLines(path);
    // One chain: seq counts 0, 1, 2, ... with no gap or repeat.
    expect(lines.every((line, i) => line["seq"] === i)).toBe(true);
    const byCall = new Map<string, string[]>();
    for (const line of lines) {
      const callId = line["call_id"];
      if (typeof callId === "string") byCall.set(callId, [...(byCall.get(callId) ?? []), String(line["line_type"])]);
    }
    expect(byCall.size).toBe(64_000);
    expect([...byCall.values()].every((types) => types.join() === "intent,outcome")).toBe(true);
  });

  it("two processes opening one record at once: one holds it, the other is refused as locked", { timeout: 120_000 }, async () => {
    for (let round = 0; round < 10; round++) {
      const path = join(tempDir(), "race.aarl");
      const [a, b] = await Promise.all([start("open", path), start("open", path)]);
      expect([a.first, b.first].sort(), `round ${round}`).toEqual(["held", "refused locked"]);
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("verify beside a process appending to the record: never Tampered about healthy Lines", { timeout: 120_000 }, async () => {
    const path = join(tempDir(), "live.aarl");
    const appender = await start("append", path);
    expect(appender.first).toBe("ready");
    try {
      const seen = new Set<string>();
      for (let i = 0; i < 15; i++) {
        const { verdict, lines } = await verifyChainFile(path);
        expect(verdict.status, JSON.stringify(verdict)).not.toBe("tampered");
        seen.add(verdict.status === "indeterminate" ? verdict.reason.code : verdict.status);
        expect(lines).toBeGreaterThan(0);
      }
      // What a reader can meet mid-append: a Session with calls in flight, or a row being written.
      for (const code of seen) expect(["unanchored_tail", "torn_final_line"]).toContain(code);
    } finally {
      await appender.stop();
    }
  });
});

describe("many Sessions (issue 12: key ids were looked up in a list)", () => {
  it(
    "2,000 Sessions, each under its own key: every key_id once, in first-seen order (kept in a Set, not scanned for in a list)",
    { timeout: 120_000 },
    async () => {
      const { PrevHash, SigningKey } = await import("../src/index.js");
      const { sealLine } = await import("../src/internal.js");
      const rows: string[] = [];
      const keyIds: string[] = [];
      let tail: { readonly lineHash: Parameters<typeof PrevHash.after>[0] } | undefined;
      for (let s = 0; s < 2_000; s++) {
        const seed = new Uint8Array(32);
        new DataView(seed.buffer).setUint32(0, s + 1);
        const key = SigningKey.fromSeed(seed);
        keyIds.push(key.keyId);
        const open = sealLine(
          {
            schema_version: 2,
            line_type: "open",
            seq: 0,
            prev_hash: PrevHash.GENESIS,
            public_key: key.publicKeyHex,
            ...(tail === undefined ? {} : { prev_session_tail: tail.lineHash }),
          },
          key,
        );
        rows.push(open.text);
        tail = open;
      }
      const result = verifyChainBytes(`${rows.join("\n")}\n`);
      expect(result.sessions).toBe(2_000);
      expect(result.key_ids).toEqual(keyIds);
    },
  );
});
