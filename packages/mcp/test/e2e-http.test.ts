import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableV2 } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BIN, EVERYTHING_SERVER, linesOf, refusedResult } from "./support.js";
import { cli, decided, wholeRecord } from "./e2e-support.js";
import { everythingHttp, listening } from "./http-support.js";
import { workspace } from "./wrap-process.js";

/**
 * `aegis wrap` over Streamable HTTP (SPEC §17.10): in front of server-everything's HTTP mode
 * (`--url`), and serving HTTP to clients (`--listen`), in front of a stdio server or of an
 * HTTP one. Every record verifies, pinned; every call has its intent and outcome; the
 * Envelope holds every request and response.
 */
const POLICY = `version: 2
default: deny
rules:
  - { id: echo, action: allow, tool: echo }
  - { id: sums-need-a-look, action: pending_approval, tool: get-sum }
`;
const TOKEN = "Bearer sekret-token-4f1c";

let everything: { readonly url: string; stop(): Promise<void> };
beforeAll(async () => {
  everything = await everythingHttp();
}, 60_000);
afterAll(async () => {
  await everything.stop();
});

/** Allowed, refused, parked and approved: what each test does through wrap, then what the record must say. */
async function exercise(client: { callTool: Client["callTool"] }, control: string, stderr: () => string): Promise<void> {
  expect(JSON.stringify((await client.callTool({ name: "echo", arguments: { message: "hi" } })).content)).toContain("hi");
  expect(refusedResult(await client.callTool({ name: "get-env", arguments: {} })).aegis).toMatchObject({ code: "POLICY_DENIED" });
  const parked = refusedResult(await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } }));
  const approvalId = parked.aegis["approval_id"] ?? "";
  await vi.waitFor(() => expect(stderr()).toContain(`parked for approval ${approvalId}`), { timeout: 30_000, interval: 20 });
  const approved = cli(["approve", approvalId, "--control", control]);
  expect(approved.status, approved.stderr).toBe(0);
  expect(JSON.stringify((await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } })).content)).toContain("5");
}

const EXERCISED: [string, string][] = [
  ["echo", "allowed"],
  ["get-env", "denied"],
  ["get-sum", "pending_approval"],
  ["get-sum", "allowed"],
];

/** Nothing wrap wrote holds the token: not its stderr, not the record, not the Envelope. */
function tokenNowhere(dir: string, stderr: string): void {
  expect(stderr).not.toContain("sekret");
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  for (const file of files) expect(readFileSync(join(file.parentPath, file.name)).includes("sekret"), file.name).toBe(false);
}

describe("aegis wrap --url: the v1 client on stdio, server-everything's Streamable HTTP mode behind", () => {
  it("[M17.5] lists what the server lists, allows, refuses, parks and approves; the token stays in the environment", async () => {
    const w = await workspace();
    const policy = join(w.dir, "policy.yaml");
    writeFileSync(policy, POLICY);
    const envelope = join(w.dir, "envelope");
    const control = join(w.dir, "c.sock");

    const direct = new Client({ name: "direct", version: "1.0.0" });
    await direct.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    const own = await direct.listTools();
    await direct.close();

    const args = ["wrap", "--audit", w.audit, "--signing-key", w.key, "--envelope", envelope, "--policy", policy, "--control", control];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, ...args, "--url", everything.url, "--header", "X-Aegis-Test: 1", "--header-env", "Authorization:AEGIS_TEST_AUTHORIZATION"],
      env: { ...process.env, AEGIS_TEST_AUTHORIZATION: TOKEN } as Record<string, string>,
      stderr: "pipe",
    });
    const stderr: string[] = [];
    transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: "through-wrap", version: "1.0.0" });
    await client.connect(transport);
    expect(await client.listTools()).toEqual(own);
    await exercise(client, control, () => stderr.join(""));
    await client.close();
    await vi.waitFor(() => expect(linesOf(w.audit).at(-1)?.line_type).toBe("close"), { timeout: 30_000, interval: 50 });

    expect(decided(await wholeRecord(w.audit, envelope))).toEqual(EXERCISED);
    tokenNowhere(w.dir, stderr.join(""));
  }, 120_000);
});

describe("aegis wrap --listen: clients over Streamable HTTP", () => {
  it("[M17.5] in front of a stdio server: the v1 client, with the token from <audit>.listen-token, lists, is allowed, refused, parked and approved; a foreign Origin gets 403", async () => {
    const w = await workspace();
    const policy = join(w.dir, "policy.yaml");
    writeFileSync(policy, POLICY);
    const envelope = join(w.dir, "envelope");
    const control = join(w.dir, "c.sock");

    const direct = new Client({ name: "direct", version: "1.0.0" });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], stderr: "ignore" }));
    const own = await direct.listTools();
    await direct.close();

    const { wrap, url, authorization } = await listening([
      "wrap",
      "--audit",
      w.audit,
      "--signing-key",
      w.key,
      "--envelope",
      envelope,
      "--policy",
      policy,
      "--control",
      control,
      "--listen",
      "127.0.0.1:0",
      "--",
      process.execPath,
      EVERYTHING_SERVER,
      "stdio",
    ]);
    // A page elsewhere (DNS rebinding) is refused before anything is read.
    const foreign = await fetch(url, {
      method: "POST",
      headers: { origin: "http://evil.example.com", "content-type": "application/json", ...authorization },
      body: "{}",
    });
    expect(foreign.status).toBe(403);

    const client = new Client({ name: "over-http", version: "1.0.0" });
    // The token wrap made and keeps beside the record (SPEC §17.10).
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: authorization } }));
    expect(await client.listTools()).toEqual(own);
    await exercise(client, control, () => wrap.stderr);
    await client.close();
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);

    expect(decided(await wholeRecord(w.audit, envelope))).toEqual(EXERCISED);
  }, 120_000);

  it("in front of --url, with a bearer token: the v2 client lists what the server lists and calls; no token, 401", async () => {
    const w = await workspace();
    const envelope = join(w.dir, "envelope");

    const direct = new ClientV2({ name: "direct", version: "1.0.0" });
    await direct.connect(new StreamableV2(new URL(everything.url)));
    const own = await direct.listTools();
    await direct.close();

    const { wrap, url } = await listening(
      [
        "wrap",
        "--audit",
        w.audit,
        "--signing-key",
        w.key,
        "--envelope",
        envelope,
        "--listen",
        "127.0.0.1:0",
        "--listen-token-env",
        "AEGIS_TEST_LISTEN_TOKEN",
        "--url",
        everything.url,
      ],
      { AEGIS_TEST_LISTEN_TOKEN: "sekret-listen-9d2e" },
    );
    const anonymous = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);

    const client = new ClientV2({ name: "over-http", version: "1.0.0" });
    await client.connect(new StreamableV2(new URL(url), { requestInit: { headers: { authorization: "Bearer sekret-listen-9d2e" } } }));
    expect(await client.listTools()).toEqual(own);
    expect(JSON.stringify((await client.callTool({ name: "get-sum", arguments: { a: 20, b: 22 } })).content)).toContain("42");
    await client.close();
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);

    expect(decided(await wholeRecord(w.audit, envelope))).toEqual([["get-sum", "allowed"]]);
    tokenNowhere(w.dir, wrap.stderr);
  }, 120_000);
});
