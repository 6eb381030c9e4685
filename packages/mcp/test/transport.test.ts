import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { openEnvelope } from "@aegis/envelope";
import { RequestDigest, ResponseDigest } from "@aegis/format";
import { parsePolicySet } from "@aegis/policy";
import { describe, expect, it } from "vitest";
import { recordingTransport } from "../src/index.js";
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, KEY, linesOf, outcomes, refusedResult, tempDir, verdictOf } from "./support.js";

/** The in-process use: two lines around the SDK client's own transport. */
describe("recordingTransport around the SDK client's transport", () => {
  it("records every tools/call to server-everything, keeps the bytes, and leaves the rest alone", async () => {
    const dir = tempDir();
    const audit = join(dir, "record.aarl");
    const transport = await recordingTransport(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], stderr: "pipe" }), {
      audit,
      key: KEY,
      envelope: join(dir, "envelope"),
    });
    const client = new Client({ name: "in-process", version: "1.0.0" });
    await client.connect(transport);

    const echoed = await client.callTool({ name: "echo", arguments: { message: "hello" } });
    expect(JSON.stringify(echoed.content)).toContain("hello");
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(sum.content)).toContain("5");
    await client.listPrompts();
    await client.listResources();
    await client.close();

    const lines = linesOf(audit);
    expect(lines.map((l) => l.line_type)).toEqual(["open", "intent", "outcome", "intent", "outcome", "close"]);
    expect(outcomes(audit).map((o) => [o["tool_id"], o["execution"]])).toEqual([
      ["echo", { status: "success" }],
      ["get-sum", { status: "success" }],
    ]);
    expect(await verdictOf(audit)).toBe("verified");

    // The request the Envelope holds is the message as the stdio transport writes it.
    const envelope = await openEnvelope(join(dir, "envelope"));
    const first: Record<string, unknown> = outcomes(audit)[0] ?? {};
    const request = await envelope.get(RequestDigest.parse(String(first["request_digest"])));
    const response = await envelope.get(ResponseDigest.parse(String(first["response_digest"])));
    await envelope.close();
    if (request.code !== "present" || response.code !== "present") throw new Error("the Envelope lacks the call's bytes");
    expect(JSON.parse(Buffer.from(request.bytes).toString())).toMatchObject({
      method: "tools/call",
      params: { name: "echo", arguments: { message: "hello" } },
    });
    expect(Buffer.from(request.bytes).includes(0x0a)).toBe(false);
    expect(JSON.parse(Buffer.from(response.bytes).toString())).toMatchObject({ result: { content: [{ type: "text" }] } });
  }, 60_000);

  it("enforces a Policy Set in process: a refused call never reaches server-filesystem; a park is answered in process", async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    mkdirSync(data);
    writeFileSync(join(data, "a.txt"), "a");
    const audit = join(dir, "record.aarl");
    const policy = parsePolicySet(`version: 2
default: deny
rules:
  - id: read
    action: allow
    tool: read_text_file
  - id: ask-before-writing
    action: pending_approval
    tool: write_file
`);
    const transport = await recordingTransport(new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, data], stderr: "pipe" }), {
      audit,
      key: KEY,
      policy,
    });
    const client = new Client({ name: "in-process", version: "1.0.0" });
    await client.connect(transport);
    await client.callTool({ name: "read_text_file", arguments: { path: join(data, "a.txt") } });
    // The client is answered as a tool that erred: callTool returns the refusal, it does not throw.
    const refused = refusedResult(await client.callTool({ name: "list_directory", arguments: { path: data } }));
    expect(refused.aegis).toMatchObject({ code: "POLICY_DENIED", layer: "wrap" });
    const parked = refusedResult(await client.callTool({ name: "write_file", arguments: { path: join(data, "b.txt"), content: "b" } }));
    const approvalId = parked.aegis["approval_id"] ?? "";
    expect(parked.text).toContain(`aegis approve ${approvalId}`);
    expect((await transport.answerPark(approvalId, { code: "approve" })).ok).toBe(true);
    await client.callTool({ name: "write_file", arguments: { path: join(data, "b.txt"), content: "b" } });
    await client.close();

    expect(outcomes(audit).map((o) => [o["tool_id"], (o["policy"] as { status: string }).status, (o["execution"] as { status: string }).status])).toEqual([
      ["read_text_file", "allowed", "success"],
      ["list_directory", "denied", "host_denied"],
      ["write_file", "pending_approval", "host_denied"],
      ["write_file", "allowed", "success"],
    ]);
    expect(outcomes(audit)[3]?.["decision_axes"]).toMatchObject({ approval_ref: approvalId });
    expect(await verdictOf(audit)).toBe("verified");
  }, 60_000);
});

describe("recordingTransport with refusal: reference", () => {
  it("answers a refused call with the reference's JSON-RPC error, which the SDK client throws as McpError -32042", async () => {
    const dir = tempDir();
    const audit = join(dir, "record.aarl");
    const policy = parsePolicySet("version: 2\ndefault: deny\nrules:\n  - { id: echo, action: allow, tool: echo }\n");
    const transport = await recordingTransport(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], stderr: "pipe" }), {
      audit,
      key: KEY,
      policy,
      refusal: "reference",
    });
    const client = new Client({ name: "reference", version: "1.0.0" });
    await client.connect(transport);
    const refused = await client.callTool({ name: "get-env", arguments: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32042);
    expect((refused as McpError).data).toEqual({ aegis: { code: "POLICY_DENIED", layer: "wrap" } });
    await client.close();
    expect(outcomes(audit).map((o) => [o["tool_id"], (o["policy"] as { status: string }).status])).toEqual([["get-env", "denied"]]);
    expect(await verdictOf(audit)).toBe("verified");
  }, 60_000);
});
