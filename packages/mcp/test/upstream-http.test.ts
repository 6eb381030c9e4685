import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { outcomes, sha256, verdictOf } from "./support.js";
import { hostile } from "./http-support.js";
import { WrapProcess, workspace, type Recorded } from "./wrap-process.js";
import { HttpUpstream } from "../src/upstream-http.js";

/**
 * wrap's own Streamable HTTP client (`--url`, SPEC §17.10), judged by what a real server
 * process received and logged: redirects followed only within the server's origin (so no
 * header reaches another), a stream that ends before its answer resumed from its last event,
 * a message written with line ends relayed as one frame, every body bounded.
 */
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});
const INITIALIZED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
const callOf = (id: number, name: string): string => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });
const logOf = (path: string): string[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "");

function wrapUrl(w: Recorded, url: string, env: NodeJS.ProcessEnv = {}): WrapProcess {
  return new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--url", url, "--header-env", "Authorization:AEGIS_TEST_AUTH"], {
    env: { AEGIS_TEST_AUTH: "Bearer sekret-51c3", ...env },
  });
}

describe("aegis wrap --url: redirects", () => {
  it("follows a 307 within the server's origin, with its headers", async () => {
    const w = await workspace();
    const server = await hostile(w, "redirect", { REDIRECT_TO: "/elsewhere", HOSTILE_HEADERS: "authorization" });
    try {
      const wrap = wrapUrl(w, server.url);
      wrap.send(INIT);
      expect(await wrap.nextJson()).toMatchObject({ id: 0, result: { serverInfo: { name: "hostile" } } });
      wrap.send(callOf(1, "echo"));
      expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { content: [{ text: "ran echo" }] } });
      wrap.end();
      expect((await wrap.finished()).code).toBe(0);
      const log = logOf(server.log);
      expect(log).toContain("POST - /mcp -");
      expect(log).toContain("POST tools/call /elsewhere -");
      expect(log.filter((l) => l.startsWith("header authorization")).every((l) => l === "header authorization Bearer sekret-51c3")).toBe(true);
    } finally {
      server.stop();
    }
  }, 60_000);

  it("follows no redirect to another origin: that server receives nothing, no header leaves, wrap says why and exits 1", async () => {
    const w = await workspace();
    const elsewhere = await hostile(w, "plain", { HOSTILE_HEADERS: "authorization", HOSTILE_LOG: `${w.dir}/elsewhere.log` });
    const server = await hostile(w, "redirect", { REDIRECT_TO: elsewhere.url, HOSTILE_HEADERS: "authorization" });
    try {
      const wrap = wrapUrl(w, server.url);
      wrap.send(INIT);
      wrap.send(callOf(1, "echo"));
      expect((await wrap.finished()).code).toBe(1);
      expect(wrap.stderr).toContain(`a redirect to ${elsewhere.url}, not followed`);
      expect(wrap.stderr).not.toContain("sekret");
      expect(() => readFileSync(`${w.dir}/elsewhere.log`, "utf8")).toThrow();
      expect(logOf(server.log)).toEqual(["header authorization Bearer sekret-51c3", "POST - /mcp -"]);
      expect(await verdictOf(w.audit)).toBe("verified");
    } finally {
      server.stop();
      elsewhere.stop();
    }
  }, 60_000);
});

describe("aegis wrap --url: event streams", () => {
  it("resumes a stream that ended before its answer from its last event id, after the server's retry", async () => {
    const w = await workspace();
    const server = await hostile(w, "resume");
    try {
      const wrap = wrapUrl(w, server.url);
      wrap.send(INIT);
      expect(await wrap.nextJson()).toMatchObject({ id: 0 });
      wrap.send(INITIALIZED);
      wrap.send(callOf(1, "resume"));
      expect(await wrap.nextJson()).toMatchObject({ id: 1, result: { content: [{ text: "ran resume" }] } });
      wrap.end();
      expect((await wrap.finished()).code).toBe(0);
      const log = logOf(server.log);
      // The session's own stream was asked for once the client said it was initialized (405 here).
      expect(log).toContain("GET - /mcp -");
      expect(log).toContain("GET - /mcp e-1");
      expect(outcomes(w.audit).find((o) => o["tool_id"] === "resume")).toMatchObject({ execution: { status: "success" } });
    } finally {
      server.stop();
    }
  }, 60_000);

  it("relays a message written with line ends as one frame, and records exactly the bytes relayed", async () => {
    const w = await workspace();
    const server = await hostile(w, "pretty");
    try {
      const wrap = wrapUrl(w, server.url);
      wrap.send(INIT);
      expect(await wrap.nextJson()).toMatchObject({ id: 0 });
      const relayed: Buffer[] = [];
      for (const [id, name] of [
        [1, "json"],
        [2, "lines"],
      ] as const) {
        wrap.send(callOf(id, name));
        const frame = await wrap.next();
        relayed.push(frame);
        expect(JSON.parse(frame.toString())).toMatchObject({ id, result: { content: [{ text: `ran ${name}` }] } });
        expect(frame.toString()).toBe(JSON.stringify(JSON.parse(frame.toString())));
      }
      wrap.end();
      expect((await wrap.finished()).code).toBe(0);
      const digests = outcomes(w.audit).flatMap((o) => (typeof o["response_digest"] === "string" ? [o["response_digest"]] : []));
      for (const frame of relayed) expect(digests).toContain(sha256(frame));
    } finally {
      server.stop();
    }
  }, 60_000);
});

describe("HttpUpstream: every body bounded", () => {
  it("drops a JSON body over the bound, counting it, and says at most 4 KiB of an error's text", async () => {
    const w = await workspace();
    const server = await hostile(w, "big-json", { BIG_BYTES: "70000" });
    const failures: string[] = [];
    const dropped: number[] = [];
    const upstream = new HttpUpstream({
      url: new URL(server.url),
      headers: {},
      onFailure: (detail) => failures.push(detail),
      bound: { maxMessageBytes: 65536, onOversize: (bytes) => dropped.push(bytes) },
    });
    const messages: string[] = [];
    upstream.serverOut.on("data", (message: Buffer) => messages.push(message.toString()));
    const ended = new Promise((resolve) => upstream.serverOut.on("end", resolve));
    try {
      upstream.serverIn.write(`${INIT}\n${callOf(1, "big")}\n${callOf(2, "echo")}\n`);
      await expect.poll(() => messages.length).toBe(2);
      // The answer over the bound reached no one; the next did, byte for byte as the server sent it.
      expect(dropped).toEqual([70000 + JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "" }] } }).length]);
      expect(messages[1]).toBe(JSON.stringify({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "ran echo" }] } }));
      upstream.serverIn.write(`${callOf(3, "refuse")}\n`);
      await ended;
      expect(failures).toEqual([`the request to ${new URL(server.url).origin}/mcp failed: POST answered 500: ${"e".repeat(4096)}`]);
    } finally {
      server.stop();
    }
  }, 60_000);
});
