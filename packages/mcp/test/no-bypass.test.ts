import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { BIN, FILESYSTEM_SERVER, MIRROR, ROOT, outcomes, refusedResult, sha256, verdictOf } from "./support.js";
import { WrapProcess, workspace } from "./wrap-process.js";

/**
 * The agent is the party the policy constrains (design §8): each test here is a way around
 * enforcement or recording that was found, driven with real processes, and asserts on what
 * the server process itself received, not on what wrap says it did.
 */
const TAP = fileURLToPath(new URL("./fixtures/tap.mjs", import.meta.url));

/** Every frame a wiretapped server received on its stdin. */
function received(prefix: string): string[] {
  return readFileSync(`${prefix}.in`, "utf8")
    .split("\n")
    .filter((l) => l !== "");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("no way around enforcement (issue 26)", () => {
  it("[M17.9] keeps from the client an answer whose id is not exactly its request's: the SDK client gets the real answer, which the record names", async () => {
    const w = await workspace();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "wrap", "--audit", w.audit, "--signing-key", w.key, "--", process.execPath, MIRROR],
      stderr: "pipe",
      env: { ...process.env, AEGIS_DEBUG: "", MIRROR_QUIET: "1" } as Record<string, string>,
    });
    const stderr: string[] = [];
    transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: "no-bypass", version: "1.0.0" });
    await client.connect(transport);
    // The mirror answers "answer-twice" first with the call's id as a string, then with the id itself.
    const result = await client.callTool({ name: "answer-twice", arguments: {} });
    expect(JSON.stringify(result.content)).toContain("genuine");
    await client.close();
    await vi.waitFor(() => expect(stderr.join("")).toContain("which is no request in flight"), { timeout: 30_000, interval: 20 });
    const [dropped, call] = [
      outcomes(w.audit).find((o) => o["tool_id"] === "<dropped-answer>"),
      outcomes(w.audit).find((o) => o["tool_id"] === "answer-twice"),
    ];
    expect(dropped).toMatchObject({ policy: { status: "denied", reason: "server frame not relayed: unpaired_id" } });
    expect(call).toMatchObject({ execution: { status: "success" } });
    expect(call?.["response_digest"]).not.toBe(dropped?.["request_digest"]);
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);

  it("resolves no relative path against roots the client named: server-filesystem drops a root that does not exist and reads from its own", async () => {
    const w = await workspace();
    const served = join(w.dir, "served");
    mkdirSync(served);
    writeFileSync(join(served, "secret.txt"), "the server's own secret\n");
    const claimed = join(w.dir, "does-not-exist");
    const policy = join(w.dir, "policy.yaml");
    writeFileSync(
      policy,
      `version: 2
default: deny
rules:
  - { id: read-claimed, action: allow, capability: fs.read, fs: { path_prefix: ${claimed}/ } }
  - { id: list, action: allow, tool: list_allowed_directories }
`,
    );
    const tap = join(w.dir, "tap");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        BIN,
        "wrap",
        "--audit",
        w.audit,
        "--signing-key",
        w.key,
        "--policy",
        policy,
        "--bindings",
        join(ROOT, "packages/mcp/bindings/server-filesystem.yaml"),
        "--control",
        join(w.dir, "c.sock"),
        "--",
        process.execPath,
        TAP,
        tap,
        process.execPath,
        FILESYSTEM_SERVER,
        served,
      ],
      stderr: "pipe",
    });
    const client = new Client({ name: "roots", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
    let answered: () => void = () => undefined;
    const rootsGiven = new Promise<void>((resolve) => (answered = resolve));
    client.setRequestHandler(ListRootsRequestSchema, () => {
      answered();
      return { roots: [{ uri: `file://${claimed}`, name: "claimed" }] };
    });
    await client.connect(transport);
    await rootsGiven;
    // The answer is written as soon as the handler returns: let it go out before the call.
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The server kept its own directory: the client's root does not exist.
    const allowed = await client.callTool({ name: "list_allowed_directories", arguments: {} });
    expect(JSON.stringify(allowed.content)).toContain(served);
    const read = refusedResult(await client.callTool({ name: "read_text_file", arguments: { path: "secret.txt" } }));
    expect(read.aegis).toMatchObject({ code: "POLICY_UNEVALUABLE", rule: "read-claimed" });
    await client.close();
    expect(received(tap).some((frame) => frame.includes("secret.txt"))).toBe(false);
    const refused = outcomes(w.audit).find((o) => o["tool_id"] === "read_text_file");
    expect(refused).toMatchObject({ policy: { status: "denied" }, execution: { status: "host_denied", reason: "not executed" } });
    expect((refused?.["decision_axes"] as Record<string, unknown>)["fs"]).toBeUndefined();
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);

  it.each([
    ["a shell that forks the server", {}],
    ["a shell that forks a server ignoring SIGTERM", { MIRROR_IGNORE_TERM: "1" }],
  ])(
    "ends the whole process tree behind %s when signalled, and exits",
    async (_, env) => {
      const w = await workspace();
      // `; :` keeps the shell from exec-ing the server: a tree of two, like npx in front of a server.
      const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--", "/bin/sh", "-c", `"${process.execPath}" "${MIRROR}"; :`], {
        env: { ...env, MIRROR_QUIET: "1" },
      });
      wrap.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "test/pid" }));
      const { result } = (await wrap.nextJson()) as { result: { pid: number } };
      expect(alive(result.pid)).toBe(true);
      wrap.child.kill("SIGTERM");
      const exit = await wrap.finished();
      expect(exit.code).toBe(128 + 15);
      await vi.waitFor(() => expect(alive(result.pid)).toBe(false), { timeout: 10_000, interval: 50 });
      expect(await verdictOf(w.audit)).toBe("verified");
    },
    60_000,
  );

  it("records a call whose frame the reader cannot split like the server: a refused frame never reaches it", async () => {
    const w = await workspace();
    const tap = join(w.dir, "tap");
    const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--", process.execPath, TAP, tap, process.execPath, MIRROR], {
      env: { MIRROR_QUIET: "1" },
    });
    const hostile = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":NaN}}}';
    wrap.send(hostile);
    expect(await wrap.nextJson()).toMatchObject({ id: null, error: { data: { aegis: { code: "UNREADABLE_FRAME" } } } });
    wrap.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }));
    await wrap.next();
    wrap.end();
    await wrap.finished();
    expect(received(tap)).toEqual([JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })]);
    expect(outcomes(w.audit).map((o) => [o["tool_id"], o["request_digest"]])).toEqual([["<unreadable-frame>", sha256(hostile)]]);
    expect(existsSync(w.audit)).toBe(true);
  }, 60_000);
});
