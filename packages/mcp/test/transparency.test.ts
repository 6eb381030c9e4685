import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { BIN, EVERYTHING_SERVER, outcomes, verdictOf } from "./support.js";
import { workspace } from "./wrap-process.js";

const TAP = fileURLToPath(new URL("./fixtures/tap.mjs", import.meta.url));

/** Every message of a byte stream, parsed, one per line. */
function messages(bytes: Buffer): Record<string, unknown>[] {
  return bytes
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("aegis wrap is transparent to everything @modelcontextprotocol/server-everything exercises", () => {
  it("[M17.1] passes each message, each way, byte for byte as it was written", async () => {
    const w = await workspace();
    const client = join(w.dir, "client-side");
    const server = join(w.dir, "server-side");
    // client -> tap -> aegis wrap -> tap -> server: the two taps see both sides of wrap.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        TAP,
        client,
        process.execPath,
        BIN,
        "wrap",
        "--audit",
        w.audit,
        "--signing-key",
        w.key,
        "--",
        process.execPath,
        TAP,
        server,
        process.execPath,
        EVERYTHING_SERVER,
        "stdio",
      ],
      stderr: "pipe",
    });
    const mcp = new Client({ name: "transparency", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
    mcp.setRequestHandler(CreateMessageRequestSchema, () => ({ model: "stub", role: "assistant", content: { type: "text", text: "sampled" } }));
    mcp.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
    mcp.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: `file://${w.dir}`, name: "work" }] }));
    await mcp.connect(transport);

    await mcp.ping();
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["echo", "trigger-sampling-request", "trigger-elicitation-request", "trigger-long-running-operation", "get-roots-list"]),
    );
    await mcp.callTool({ name: "echo", arguments: { message: "through wrap" } });
    await mcp.callTool({ name: "get-tiny-image", arguments: {} });
    const progress: number[] = [];
    await mcp.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 4 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(progress.length).toBeGreaterThan(0);
    await mcp.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
    await mcp.callTool({ name: "trigger-elicitation-request", arguments: {} });
    await mcp.callTool({ name: "get-roots-list", arguments: {} });
    const abort = new AbortController();
    const cancelled = mcp
      .callTool({ name: "trigger-long-running-operation", arguments: { duration: 3, steps: 3 } }, undefined, {
        signal: abort.signal,
        onprogress: () => abort.abort("enough"),
      })
      .catch((e: unknown) => e);
    expect(await cancelled).toBeInstanceOf(Error);
    const { resources } = await mcp.listResources();
    if (resources[0] !== undefined) await mcp.readResource({ uri: resources[0].uri });
    await mcp.listResourceTemplates();
    const { prompts } = await mcp.listPrompts();
    expect(prompts.map((p) => p.name)).toContain("simple-prompt");
    await mcp.getPrompt({ name: "simple-prompt" });
    await mcp.ping();
    await mcp.close();

    const clientIn = readFileSync(`${client}.in`);
    const serverIn = readFileSync(`${server}.in`);
    const serverOut = readFileSync(`${server}.out`);
    const clientOut = readFileSync(`${client}.out`);
    // Byte for byte, each way.
    expect(serverIn.equals(clientIn)).toBe(true);
    expect(clientOut.equals(serverOut)).toBe(true);

    // And the traffic held every kind of message the test meant to exercise.
    const up = messages(clientIn);
    const down = messages(serverOut);
    const methods = (list: Record<string, unknown>[]) => new Set(list.map((m) => m["method"]).filter((m) => m !== undefined));
    expect([...methods(up)]).toEqual(
      expect.arrayContaining([
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "notifications/cancelled",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
      ]),
    );
    expect([...methods(down)]).toEqual(expect.arrayContaining(["notifications/progress", "sampling/createMessage", "elicitation/create", "roots/list"]));
    // The client's answers to the server's own requests went up, unrecorded.
    expect(up.some((m) => m["method"] === undefined && typeof m["result"] === "object")).toBe(true);

    const calls = up.filter((m) => m["method"] === "tools/call").length;
    expect(outcomes(w.audit)).toHaveLength(calls);
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 120_000);
});
