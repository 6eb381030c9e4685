import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { outcomes, sha256, verdictOf } from "./support.js";
import { httpSpy, listening } from "./http-support.js";
import { WrapProcess, workspace } from "./wrap-process.js";

/**
 * The relay's one strict reading (SPEC §17.1, ADR 0016) over Streamable HTTP, message by
 * message (SPEC §17.10), judged by what a spy server received: a message that readers could
 * take two ways never reaches it, a batch holding a call is refused whole, an answer reaches
 * the client only when it pairs exactly, and the record names the very bytes the server got.
 */
const received = (log: string): { bodies: Buffer[]; headers: string[] } => {
  const rows = readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "");
  return { bodies: rows.filter((r) => !r.startsWith("header ")).map((r) => Buffer.from(r, "hex")), headers: rows.filter((r) => r.startsWith("header ")) };
};

describe("aegis wrap --url: the strict reading, message by message", () => {
  it("[M17.8] [M17.9] [M17.10] sends the server exactly the bytes it records, and never what it cannot read", async () => {
    const w = await workspace();
    const log = join(w.dir, "spy.log");
    const spy = await httpSpy(log, ["x-aegis-test", "authorization"]);
    try {
      const wrap = new WrapProcess(
        [
          "wrap",
          "--audit",
          w.audit,
          "--signing-key",
          w.key,
          "--url",
          spy.url,
          "--header",
          "X-Aegis-Test: yes",
          "--header-env",
          "Authorization:AEGIS_TEST_AUTH",
        ],
        { env: { AEGIS_TEST_AUTH: "Bearer sekret-7a1b" } },
      );
      // White space a forgiving reader skips: what is sent and recorded is the JSON text the SDK writes.
      wrap.send(
        '{ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }',
      );
      expect(await wrap.nextJson()).toMatchObject({ id: 0, result: { serverInfo: { name: "spy" } } });
      wrap.send('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{ "name" : "echo" }}');
      expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { content: [{ text: "ran echo" }] } });
      // Read two ways (a key written twice), and a batch holding a call: refused, never sent.
      wrap.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","name":"rm"}}');
      expect(await wrap.nextJson()).toMatchObject({ id: null, error: { data: { aegis: { code: "UNREADABLE_FRAME" } } } });
      wrap.send(JSON.stringify([{ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "rm" } }]));
      expect(JSON.parse((await wrap.next()).toString())).toMatchObject([{ id: 3, error: { data: { aegis: { code: "HOST_DENIED" } } } }]);
      // The server answers "4" to the call 4: kept from the client, recorded.
      wrap.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "mismatch" } }));
      wrap.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "after" } }));
      expect(await wrap.nextJson()).toMatchObject({ id: 5, result: { content: [{ text: "ran after" }] } });
      wrap.end();
      expect((await wrap.finished()).code).toBe(0);

      const { bodies, headers } = received(log);
      const sent = bodies.map((b) => b.toString());
      expect(sent.some((b) => b.includes('"rm"'))).toBe(false);
      expect(headers).toContain("header x-aegis-test yes");
      expect(headers).toContain("header authorization Bearer sekret-7a1b");
      expect(wrap.stderr).not.toContain("sekret");
      expect(readFileSync(w.audit).includes("sekret")).toBe(false);

      const calls = outcomes(w.audit);
      const byTool = (tool: string) => calls.filter((o) => o["tool_id"] === tool);
      // Each call the server ran: the record's digest is of the very body the server was sent.
      for (const tool of ["echo", "mismatch", "after"]) {
        const [call] = byTool(tool);
        expect(
          bodies.map((b) => sha256(b)),
          tool,
        ).toContain(call?.["request_digest"]);
      }
      expect(byTool("echo")[0]).toMatchObject({ execution: { status: "success" } });
      expect(byTool("<unreadable-frame>")[0]).toMatchObject({ policy: { status: "denied", reason: "frame not read: duplicate_key" } });
      expect(byTool("rm")[0]).toMatchObject({ execution: { status: "host_denied", reason: "not executed" } });
      expect(byTool("<dropped-answer>")[0]).toMatchObject({ policy: { status: "denied", reason: "server frame not relayed: unpaired_id" } });
      // Never answered: in the words true of an HTTP server, not of a child.
      expect(byTool("mismatch")[0]).toMatchObject({
        execution: { status: "host_denied", reason: "the client hung up; the server did not answer within the shutdown grace" },
      });
      expect(await verdictOf(w.audit)).toBe("verified");
    } finally {
      await spy.stop();
    }
  }, 60_000);
});

/** A POST to the listener, as a client sends one, with the headers it chooses (Host included). */
function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...headers },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (chunk: Buffer) => parts.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString() }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("aegis wrap --listen: the strict reading, message by message", () => {
  it("[M17.8] [M17.10] refuses and records a body read two ways and a batch holding a call; the server gets neither, nor the token; Host and Origin are checked", async () => {
    const w = await workspace();
    const log = join(w.dir, "spy.log");
    const spy = await httpSpy(log, ["authorization"]);
    try {
      const { wrap, url, authorization } = await listening(["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--url", spy.url]);
      expect((await post(url, "{}", { host: "evil.example.com", ...authorization })).status).toBe(403);
      expect((await post(url, "{}", { origin: "http://localhost.evil.example.com", ...authorization })).status).toBe(403);

      const init = await post(
        url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        }),
        {
          origin: new URL(url).origin,
          ...authorization,
        },
      );
      expect(init.status).toBe(200);
      const session = String(init.headers["mcp-session-id"]);
      expect(session).toMatch(/^[0-9a-f-]{36}$/);
      const inSession = { "mcp-session-id": session, ...authorization };

      const twice = await post(url, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"rm"}}', inSession);
      expect(twice.status).toBe(400);
      expect(JSON.parse(twice.body)).toMatchObject({ id: null, error: { data: { aegis: { code: "UNREADABLE_FRAME" } } } });

      const batch = await post(url, JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "rm" } }]), inSession);
      expect(JSON.parse(batch.body)).toMatchObject([{ id: 2, error: { data: { aegis: { code: "HOST_DENIED" } } } }]);

      const echo = await post(url, '{ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "echo" } }', inSession);
      expect(JSON.parse(echo.body)).toMatchObject({ id: 3, result: { content: [{ text: "ran echo" }] } });

      expect((await post(url, "{}", { "mcp-session-id": "no-such-session", ...authorization })).status).toBe(404);
      wrap.child.kill("SIGTERM");
      await wrap.finished();

      const { bodies, headers } = received(log);
      expect(bodies.some((b) => b.toString().includes('"rm"'))).toBe(false);
      // The listener's token is the client's to wrap, never passed on to the server.
      expect(headers.length).toBeGreaterThan(0);
      for (const header of headers) expect(header).toBe("header authorization ");
      const calls = outcomes(w.audit);
      expect(calls.map((o) => o["tool_id"])).toEqual(["<unreadable-frame>", "rm", "echo"]);
      // The body the client sent, the record names by its digest (the Envelope would keep it).
      expect(calls[0]?.["request_digest"]).toBe(sha256('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"rm"}}'));
      expect(bodies.map((b) => sha256(b))).toContain(calls[2]?.["request_digest"]);
      expect(await verdictOf(w.audit)).toBe("verified");
    } finally {
      await spy.stop();
    }
  }, 60_000);
});
