import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MIRROR, linesOf, verdictOf } from "./support.js";
import { hostile, listening } from "./http-support.js";
import { WrapProcess, workspace, type Recorded } from "./wrap-process.js";

/**
 * wrap over HTTP as an attacker tries it (SPEC §17.7, §17.10, design §8): the listener's door
 * is closed to everyone without the token, other local users included; no request that comes
 * once a stop or a DELETE began runs anything; every wait on a `--url` server is bounded, and
 * so is every message it sends. Each test is judged by what real processes did: which server
 * was started, what it received, how wrap exited and how much memory it held.
 */
const SPY = fileURLToPath(new URL("./fixtures/spy-server.mjs", import.meta.url));
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});
const callOf = (id: number, name: string): string => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

interface Answer {
  readonly status: number | undefined;
  readonly text: string;
}

/**
 * A request written by hand on a socket of its own, so that its body can be held back: the
 * headers and `first` go at once, `rest` when the test says. `connection: close`, so the
 * answer ends with the socket; `status` is undefined when the socket closed unanswered.
 */
function heldRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string,
  split: number,
): { rest(): void; readonly answer: Promise<Answer> } {
  const target = new URL(url);
  const socket = connect(Number(target.port), target.hostname);
  const head = [`${method} ${target.pathname} HTTP/1.1`, `host: ${target.host}`, "connection: close", `content-length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  socket.write(`${head.join("\r\n")}\r\n\r\n${body.slice(0, split)}`);
  const parts: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => parts.push(chunk));
  const answer = new Promise<Answer>((resolve) => {
    socket.on("close", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), text });
    });
    socket.on("error", () => undefined);
  });
  return { rest: () => void socket.write(body.slice(split)), answer };
}

/** A whole request, answered: its status, headers and body. */
async function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const JSON_POST = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/**
 * The server wrap starts per session: the spy, which first notes its start in `started`.
 * `lingering`: its shell holds the server's output open 5 s after the spy exits, so that a
 * stop waits out its whole budget (SPEC §17.7) while a test does something meanwhile.
 */
function spyCommand(
  w: Recorded,
  lingering = false,
): { readonly args: string[]; readonly env: NodeJS.ProcessEnv; readonly started: string; readonly log: string } {
  const started = join(w.dir, "started.log");
  const log = join(w.dir, "spy.log");
  const script = `echo started >> "$STARTED"; ${lingering ? '"$0" "$1"; sleep 5' : 'exec "$0" "$1"'}`;
  return { args: ["/bin/sh", "-c", script, process.execPath, SPY], env: { STARTED: started, SPY_LOG: log }, started, log };
}

const startsOf = (file: string): number =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "").length
    : 0;
const received = (log: string): string[] =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => Buffer.from(l, "hex").toString("utf8"))
    : [];

/** The session id of an `initialize` answered through the listener. */
async function session(url: string, authorization: Record<string, string>): Promise<string> {
  const init = await request(url, "POST", { ...JSON_POST, ...authorization }, INIT);
  expect(init.status, init.text).toBe(200);
  const id = init.headers.get("mcp-session-id");
  if (id === null) throw new Error(`no session id in ${init.text}`);
  return id;
}

describe("aegis wrap --listen: a bearer token on every bind", () => {
  it("[M17.12] keeps its token in <audit>.listen-token, 0600 whatever the umask, never prints it, and refuses (401) any request without it", async () => {
    const w = await workspace();
    const spy = spyCommand(w);
    const args = ["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--", ...spy.args];
    const { wrap, url, token, authorization } = await listening(args, spy.env, "umask 000");
    const file = `${w.audit}.listen-token`;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(wrap.stderr).toContain(`(bearer token in ${file})`);
    expect(wrap.stderr).not.toContain(token);

    for (const refused of [{}, { authorization: "Bearer not-the-token" }, { authorization: token }, { authorization: `Basic ${token}` }]) {
      const answer = await request(url, "POST", { ...JSON_POST, ...refused }, INIT);
      expect(answer.status, JSON.stringify(refused)).toBe(401);
    }
    // Refused before anything was read: no server was started for them.
    expect(startsOf(spy.started)).toBe(0);
    await session(url, authorization);
    expect(startsOf(spy.started)).toBe(1);
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);

    // Restarted, wrap keeps the token, so a client's configuration stays valid.
    const again = await listening(args, spy.env);
    expect(again.token).toBe(token);
    await session(again.url, authorization);
    again.wrap.child.kill("SIGTERM");
    expect((await again.wrap.finished()).code).toBe(128 + 15);
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);

  it.skipIf(process.getuid?.() !== 0)(
    "[M17.12] another local user (nobody, uid 65534) can neither read the token nor call a tool without it",
    async () => {
      const w = await workspace();
      // Only the token file's own mode keeps it: the folder is open to everyone.
      chmodSync(w.dir, 0o755);
      const spy = spyCommand(w);
      const { wrap, url } = await listening(["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--", ...spy.args], spy.env);
      const script = `
      const [url, file] = process.argv.slice(1);
      let read;
      try { require("node:fs").readFileSync(file); read = "read"; } catch (e) { read = e.code; }
      const body = ${JSON.stringify(INIT)};
      fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body })
        .then((r) => console.log(read, r.status), (e) => console.log(read, e.message));`;
      const other = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script, url, `${w.audit}.listen-token`], {
        encoding: "utf8",
        cwd: "/",
      });
      expect(other.stderr).toBe("");
      expect(other.stdout.trim()).toBe("EACCES 401");
      expect(startsOf(spy.started)).toBe(0);
      wrap.child.kill("SIGTERM");
      expect((await wrap.finished()).code).toBe(128 + 15);
    },
    60_000,
  );

  it("refuses to start on a token file others may read, saying which and how to mend it", async () => {
    const w = await workspace();
    const first = await listening(["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--", process.execPath, MIRROR]);
    first.wrap.child.kill("SIGTERM");
    await first.wrap.finished();
    const file = `${w.audit}.listen-token`;
    chmodSync(file, 0o644);
    const lines = linesOf(w.audit).length;
    const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--", process.execPath, MIRROR]);
    expect((await wrap.finished()).code).toBe(1);
    expect(wrap.stderr).toContain(`error: ${file}: the token file is mode 0644`);
    expect(wrap.stderr).toContain(`help: `);
    expect(wrap.stderr).toContain(`chmod 600 ${file}`);
    expect(wrap.stderr).not.toMatch(/^\s+at /m);
    // Nothing was begun: no Session for a wrap that could not guard its door.
    expect(linesOf(w.audit).length).toBe(lines);
  }, 60_000);
});

describe("aegis wrap --listen: nothing runs once a stop or a DELETE began", () => {
  it("[M17.13] a POST whose body is still arriving at SIGTERM is answered 503, starts no server, and wrap exits 143", async () => {
    const w = await workspace();
    const spy = spyCommand(w, true);
    const { wrap, url, authorization } = await listening(
      ["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--", ...spy.args],
      spy.env,
    );
    // A session open, so the stop has a connection to wait for while the late body arrives.
    await session(url, authorization);
    const late = heldRequest(url, "POST", { ...JSON_POST, ...authorization }, INIT, 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    wrap.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 100));
    late.rest();
    const answer = await late.answer;
    // Answered 503, or cut off unanswered once every connection ended: never run.
    if (answer.status !== undefined) expect(answer.status, answer.text).toBe(503);
    expect((await wrap.finished()).code).toBe(128 + 15);
    expect(startsOf(spy.started)).toBe(1);
    expect(received(spy.log).filter((m) => m.includes('"initialize"'))).toHaveLength(1);
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);

  it("a POST to a session deleted while its body arrives is answered 404 at once, and never reaches the server", async () => {
    const w = await workspace();
    const spy = spyCommand(w);
    const { wrap, url, authorization } = await listening(
      ["wrap", "--audit", w.audit, "--signing-key", w.key, "--listen", "127.0.0.1:0", "--", ...spy.args],
      spy.env,
    );
    const id = await session(url, authorization);
    const inSession = { ...JSON_POST, ...authorization, "mcp-session-id": id };
    const late = heldRequest(url, "POST", inSession, callOf(1, "after-delete"), 10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await request(url, "DELETE", inSession)).status).toBe(200);
    late.rest();
    const answer = await late.answer;
    expect(answer.status, answer.text).toBe(404);
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);
    expect(received(spy.log).some((m) => m.includes("after-delete"))).toBe(false);
  }, 60_000);

  it("in front of a server that exits at start, initialize is answered with an error saying the server is gone", async () => {
    const w = await workspace();
    const { wrap, url, authorization } = await listening([
      "wrap",
      "--audit",
      w.audit,
      "--signing-key",
      w.key,
      "--listen",
      "127.0.0.1:0",
      "--",
      process.execPath,
      "-e",
      "process.exit(0)",
    ]);
    const answer = await request(url, "POST", { ...JSON_POST, ...authorization }, INIT);
    expect(answer.status, answer.text).toBe(502);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(answer.text)).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { message: "aegis wrap: the server of this session is gone: it exited" },
    });
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);
  }, 60_000);
});

/** wrap --url in front of `url`, initialized over stdio as a client does. */
async function wrapUrl(w: Recorded, url: string): Promise<WrapProcess> {
  const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--url", url]);
  wrap.send(INIT);
  expect(await wrap.nextJson()).toMatchObject({ id: 0, result: { serverInfo: { name: "hostile" } } });
  return wrap;
}

describe("aegis wrap --url: every wait on the server bounded, every message too", () => {
  it("[M17.6] a server that never answers the session's DELETE is let go, after a hang-up and after SIGTERM", async () => {
    const w = await workspace();
    const server = await hostile(w, "hang-delete");
    try {
      const hungUp = await wrapUrl(w, server.url);
      hungUp.end();
      expect((await hungUp.finished()).code).toBe(0);
      const signalled = await wrapUrl(w, server.url);
      signalled.child.kill("SIGTERM");
      expect((await signalled.finished()).code).toBe(128 + 15);
      // Each asked for the DELETE, and neither waited for its answer for ever.
      expect(readFileSync(server.log, "utf8").match(/^DELETE/gm)).toHaveLength(2);
      expect(await verdictOf(w.audit)).toBe("verified");
    } finally {
      server.stop();
    }
  }, 60_000);

  it("drops an endless event as it comes: memory stays flat, the call's later answer still arrives", async () => {
    const w = await workspace();
    const server = await hostile(w, "flood", { FLOOD_MIB: "700" });
    try {
      const wrap = await wrapUrl(w, server.url);
      const rss = (): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${wrap.child.pid ?? 0}/status`, "utf8"))?.[1] ?? 0) * 1024;
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
      wrap.send(callOf(1, "flood"));
      const answer = await wrap.nextJson(120_000);
      clearInterval(sampler);
      expect(answer).toMatchObject({ id: 1, result: { content: [{ text: "ran flood" }] } });
      expect(wrap.stderr).toMatch(/dropped a 7\d{8}-byte frame from the server \(over the 268435456-byte bound\)/);
      // At most the bound is ever held (256 MiB), never the 700 MiB event (it took 871 MB).
      expect(peak - before, `peak ${peak}, before ${before}`).toBeLessThan(400 * 2 ** 20);
      wrap.end();
      expect((await wrap.finished()).code).toBe(0);
    } finally {
      server.stop();
    }
  }, 180_000);
});

describe("aegis wrap: the exit code when stopped, with a server that is a process tree", () => {
  // The shell's child outlives SIGTERM; wrap reaps the rest of the group after the server exits.
  const tree = ['(trap "" TERM; sleep 30) </dev/null >/dev/null 2>&1 & exec "$0" "$1"', process.execPath, MIRROR];

  it("[M17.6] is 128+15 over stdio", async () => {
    const w = await workspace();
    const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--", "/bin/sh", "-c", ...tree]);
    wrap.send(INIT);
    expect(await wrap.nextJson()).toMatchObject({ id: 0 });
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);
  }, 60_000);

  it("[M17.6] is 128+15 with --listen", async () => {
    const w = await workspace();
    const { wrap, url, authorization } = await listening([
      "wrap",
      "--audit",
      w.audit,
      "--signing-key",
      w.key,
      "--listen",
      "127.0.0.1:0",
      "--",
      "/bin/sh",
      "-c",
      ...tree,
    ]);
    await session(url, authorization);
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);
  }, 60_000);
});
