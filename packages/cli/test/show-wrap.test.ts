import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, aegis, tempDir } from "./support.js";

/** Each call's "outcome N ms later" and its execution's "(M ms": the Lines' times never say less than was measured. */
function times(shown: string): { later: number; ran: number }[] {
  return [...shown.matchAll(/outcome (\d+) ms later\n(?:.*\n)*? {4}execution {3}[^(\n]*\((\d+) ms/g)].map((m) => ({ later: Number(m[1]), ran: Number(m[2]) }));
}

describe("aegis show on what was recorded", () => {
  it("calls aegis wrap relayed: says wrap confines nothing and measured no memory, instead of ceilings and a peak of 0", async () => {
    const dir = tempDir();
    const key = join(dir, "signing.key");
    const record = join(dir, "session.aarl");
    expect(aegis(["keygen", "--out", key]).status).toBe(0);
    const server = join(ROOT, "node_modules/.bin/mcp-server-everything");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "wrap", "--audit", record, "--signing-key", key, "--", server],
      stderr: "ignore",
    });
    const client = new Client({ name: "show-wrap-test", version: "1.0.0" });
    await client.connect(transport);
    for (const message of ["one", "two"])
      expect(await client.callTool({ name: "echo", arguments: { message } })).toEqual({ content: [{ type: "text", text: `Echo: ${message}` }] });
    await client.close();

    const shown = aegis(["show", record]);
    expect(shown.status, shown.stderr).toBe(0);
    expect(
      shown.stdout.match(/capability {2}granted wrap-passthrough-call-\d+ for echo; no limits: aegis wrap relays the call and confines nothing\n/g),
    ).toHaveLength(2);
    expect(shown.stdout.match(/execution {3}success \(\d+ ms, memory not measured\)\n/g)).toHaveLength(2);
    expect(shown.stdout).not.toMatch(/0 B memory|peak 0 B/);
    for (const t of times(shown.stdout)) expect(t.later).toBeGreaterThanOrEqual(t.ran);
  }, 60_000);

  it("the demo's calls: no execution longer than the Lines' own times allow, and no memory figure it did not measure", () => {
    const cwd = tempDir();
    expect(aegis(["demo", "--out", "demo"], { cwd }).status).toBe(0);
    const shown = aegis(["show", join(cwd, "demo/session.aarl")]);
    expect(shown.status).toBe(0);
    const measured = times(shown.stdout);
    expect(measured).toHaveLength(3);
    for (const t of measured) expect(t.later).toBeGreaterThanOrEqual(t.ran);
    expect(shown.stdout).not.toContain("peak");
  });
});
