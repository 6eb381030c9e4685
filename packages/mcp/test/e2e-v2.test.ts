import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { describe, expect, it, vi } from "vitest";
import { BIN, linesOf, refusedResult } from "./support.js";
import { bytesOf, cli, decided, wholeRecord } from "./e2e-support.js";
import { workspace } from "./wrap-process.js";

/**
 * The v2 SDK (`@modelcontextprotocol/client` and `@modelcontextprotocol/server` 2.x) through
 * `aegis wrap`, in both eras of the protocol: the 2025 era (`initialize`, the server asking
 * with its own `elicitation/create`) and MCP 2026-07-28 (`server/discover`, the per-request
 * `_meta` envelope, `subscriptions/listen`, a call answered `input_required` and made again).
 */
const V2_SERVER = fileURLToPath(new URL("./fixtures/v2-server.mjs", import.meta.url));

type Era = "2025-11-25" | "2026-07-28";

interface Connected {
  readonly client: Client;
  /** Resolves with the tool names once the server says its list changed and the client has listed again. */
  readonly changed: Promise<string[]>;
  /** How many times the server asked the client for input. */
  readonly asked: { count: number };
}

async function connect(command: string, args: readonly string[], era: Era, stderr: string[]): Promise<Connected> {
  const transport = new StdioClientTransport({ command, args: [...args], stderr: "pipe" });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  let changedTo: (names: string[]) => void = () => undefined;
  const changed = new Promise<string[]>((resolve) => (changedTo = resolve));
  const client = new Client(
    { name: "e2e-v2", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} } },
      // The default negotiation speaks the 2025 era; "auto" tries server/discover first.
      ...(era === "2026-07-28" ? { versionNegotiation: { mode: "auto" as const } } : {}),
      listChanged: { tools: { onChanged: (_error, tools) => changedTo((tools ?? []).map((t) => t.name)) } },
    },
  );
  const asked = { count: 0 };
  client.setRequestHandler("elicitation/create", () => {
    asked.count++;
    return Promise.resolve({ action: "accept" as const, content: { ok: true } });
  });
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe(era);
  return { client, changed, asked };
}

const POLICY = `version: 2
default: deny
rules:
  - { id: echo, action: allow, tool: echo }
  - { id: no-secrets, action: deny, tool: echo, priority: 10, reason: secrets stay home, args: [{ pointer: /params/arguments/text, exact: secret }] }
  - { id: deploy, action: allow, tool: deploy }
  - { id: add-tool, action: allow, tool: add_tool }
  - { id: review-notes, action: pending_approval, tool: write_note }
`;

describe("the v2 SDK client through aegis wrap to a v2 SDK server, over stdio", () => {
  it.each<Era>(["2025-11-25", "2026-07-28"])(
    "[M17.5] protocol %s: relays discovery and notifications, records every call, refuses, parks and approves; the record verifies",
    async (era) => {
      const w = await workspace();
      const policy = join(w.dir, "policy.yaml");
      writeFileSync(policy, POLICY);
      const envelope = join(w.dir, "envelope");
      const control = join(w.dir, "c.sock");

      const direct = await connect(process.execPath, [V2_SERVER], era, []);
      const own = await direct.client.listTools();
      await direct.client.close();

      const stderr: string[] = [];
      const wrapped = ["wrap", "--audit", w.audit, "--signing-key", w.key, "--envelope", envelope, "--policy", policy, "--control", control];
      const { client, changed, asked } = await connect(process.execPath, [BIN, ...wrapped, "--", process.execPath, V2_SERVER], era, stderr);
      expect(await client.listTools()).toEqual(own);

      expect(await client.callTool({ name: "echo", arguments: { text: "hi" } })).toMatchObject({ content: [{ type: "text", text: "echo: hi" }] });

      // Refused: the client returns the refusal as the tool's error result, without throwing.
      const denied = refusedResult(await client.callTool({ name: "echo", arguments: { text: "secret" } }));
      expect(denied.aegis).toEqual({ layer: "wrap", code: "POLICY_DENIED", rule: "no-secrets", reason: "secrets stay home" });

      const parked = refusedResult(await client.callTool({ name: "write_note", arguments: { note: "remember" } }));
      const approvalId = parked.aegis["approval_id"] ?? "";
      expect(parked.aegis).toMatchObject({ code: "PENDING_APPROVAL", rule: "review-notes" });
      await vi.waitFor(() => expect(stderr.join("")).toContain(`parked for approval ${approvalId}`), { timeout: 30_000, interval: 20 });
      expect(cli(["approve", approvalId, "--control", control]).status).toBe(0);
      expect(await client.callTool({ name: "write_note", arguments: { note: "remember" } })).toMatchObject({ content: [{ text: "noted: remember" }] });

      // The server asks for a confirmation: two rounds in 2026-07-28, one call in the 2025 era.
      expect(await client.callTool({ name: "deploy", arguments: { env: "prod" } })).toMatchObject({ content: [{ text: "deployed to prod" }] });
      expect(asked.count).toBe(1);

      // The tool list changes: the client hears of it (through subscriptions/listen in 2026-07-28).
      await client.callTool({ name: "add_tool", arguments: { name: "extra" } });
      expect(await changed).toContain("extra");
      await client.close();
      await vi.waitFor(() => expect(linesOf(w.audit).at(-1)?.line_type).toBe("close"), { timeout: 30_000, interval: 50 });

      const outcomes = await wholeRecord(w.audit, envelope);
      const rounds: [string, string][] =
        era === "2026-07-28"
          ? [
              ["deploy", "allowed"],
              ["deploy", "allowed"],
            ]
          : [["deploy", "allowed"]];
      expect(decided(outcomes)).toEqual([
        ["echo", "allowed"],
        ["echo", "denied"],
        ["write_note", "pending_approval"],
        ["write_note", "allowed"],
        ...rounds,
        ["add_tool", "allowed"],
      ]);
      const server = stderr.join("");
      expect(server).toContain("v2-server: ran echo hi");
      expect(server).not.toContain("v2-server: ran echo secret");
      expect(server.match(/v2-server: ran write_note/g)).toHaveLength(1);
      expect(server.match(/v2-server: ran deploy prod/g)).toHaveLength(1);

      const deploys = outcomes.filter((o) => o["tool_id"] === "deploy");
      if (era === "2026-07-28") {
        // The second round continues the first, which asked for input; the Envelope shows both.
        const [first, second] = deploys;
        if (first === undefined || second === undefined) throw new Error("two rounds expected");
        expect(first["continues_call"]).toBeUndefined();
        expect(second["continues_call"]).toBe(first["call_id"]);
        const one = await bytesOf(envelope, first);
        const two = await bytesOf(envelope, second);
        expect(one.response).toMatchObject({ result: { resultType: "input_required", requestState: "deploy:prod" } });
        expect(two.request).toMatchObject({
          method: "tools/call",
          params: {
            name: "deploy",
            arguments: { env: "prod" },
            requestState: "deploy:prod",
            inputResponses: { confirm: { action: "accept" } },
            _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
          },
        });
      } else {
        expect(deploys[0]?.["continues_call"]).toBeUndefined();
      }
      expect(cli(["show", w.audit]).stdout).toContain(era === "2026-07-28" ? "continues" : "deploy");
    },
    120_000,
  );
});
