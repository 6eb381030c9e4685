import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { parsePolicySet } from "@aegis/policy";
import { describe, expect, it } from "vitest";
import { recordingTransport } from "../src/v2.js";
import { KEY, outcomes, refusedResult, tempDir, verdictOf } from "./support.js";
import { fileURLToPath } from "node:url";

const V2_SERVER = fileURLToPath(new URL("./fixtures/v2-server.mjs", import.meta.url));

describe("recordingTransport around the v2 SDK client's transport", () => {
  it("records and enforces in both protocol eras", async () => {
    const dir = tempDir();
    const audit = join(dir, "record.aarl");
    const transport = await recordingTransport(new StdioClientTransport({ command: process.execPath, args: [V2_SERVER], stderr: "pipe" }), {
      audit,
      key: KEY,
      policy: parsePolicySet("version: 2\ndefault: deny\nrules:\n  - { id: echo, action: allow, tool: echo }\n"),
    });
    const client = new Client({ name: "in-process-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    expect(await client.callTool({ name: "echo", arguments: { text: "hi" } })).toMatchObject({ content: [{ text: "echo: hi" }] });
    expect(refusedResult(await client.callTool({ name: "write_note", arguments: { note: "x" } })).aegis).toMatchObject({ code: "POLICY_DENIED" });
    await client.close();
    expect(outcomes(audit).map((o) => o["tool_id"])).toEqual(["echo", "write_note"]);
    expect(await verdictOf(audit)).toBe("verified");
  }, 60_000);
});
