import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, FILESYSTEM_SERVER, ROOT, linesOf, verdictOf } from "./support.js";
import { listening } from "./http-support.js";
import { WrapProcess, workspace, type Recorded } from "./wrap-process.js";

/**
 * `aegis wrap --confine` (SPEC §17.11): the server held by the kernel, through bubblewrap, to
 * what was granted. Every test asserts on what a real server could do (what it read, wrote and
 * reached, and what a listener saw), not on what wrap says; and every record verifies, naming
 * the grants. The tests need bubblewrap and curl (`.ci/run` installs both): without them they
 * fail, never skip.
 */
const REACH = fileURLToPath(new URL("./fixtures/reach-server.mjs", import.meta.url));
const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));
const NODE_MODULES = join(ROOT, "node_modules");
/** Node's own folder: a Node from npm (CI's Node 24, in a temporary folder) is on no system path --allow-exec-support grants. */
const NODE_HOME = dirname(process.execPath);
const SECRET = "s3cret-bytes-5f0c9a1e";
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

/** A folder holding `granted/notes.md` and `secret/key.txt`, the server's root. */
function tree(w: Recorded): { readonly root: string; readonly granted: string; readonly secret: string } {
  const root = join(w.dir, "root");
  const granted = join(root, "granted");
  const secret = join(root, "secret");
  mkdirSync(granted, { recursive: true });
  mkdirSync(secret, { recursive: true });
  writeFileSync(join(granted, "notes.md"), "ship on friday\n");
  writeFileSync(join(secret, "key.txt"), `${SECRET}\n`);
  return { root, granted, secret };
}

/** The SDK client on stdio, through wrap with `args`, in front of the official filesystem server. */
async function filesystem(w: Recorded, root: string, args: readonly string[]): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      "wrap",
      "--audit",
      w.audit,
      "--signing-key",
      w.key,
      "--envelope",
      join(w.dir, "envelope"),
      ...args,
      "--",
      process.execPath,
      FILESYSTEM_SERVER,
      root,
    ],
    stderr: "pipe",
  });
  const said: string[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => said.push(chunk.toString()));
  const client = new Client({ name: "confined", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => said.join("") };
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>): string => JSON.stringify(result.content);

/** Nothing under `dir` holds `bytes`: not the record, not the Envelope. */
function nowhere(dir: string, bytes: string): void {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())) {
    if (entry.name === "key.txt") continue;
    expect(readFileSync(join(entry.parentPath, entry.name)).includes(bytes), join(entry.parentPath, entry.name)).toBe(false);
  }
}

function aegis(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...process.env, AEGIS_DEBUG: "" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The reach server (fixtures/reach-server.mjs) under wrap, initialized; `call` asks it one tool. */
async function reach(
  w: Recorded,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ wrap: WrapProcess; call: (name: string, a: Record<string, unknown>) => Promise<string> }> {
  const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, ...args, "--", process.execPath, REACH], { env });
  wrap.send(JSON.stringify(INIT));
  expect(await wrap.nextJson(), wrap.stderr).toMatchObject({ id: 0 });
  let id = 1;
  const call = async (name: string, a: Record<string, unknown>): Promise<string> => {
    wrap.send(JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: a } }));
    const answer = (await wrap.nextJson()) as { result?: { content?: { text?: string }[] } };
    return answer.result?.content?.[0]?.text ?? JSON.stringify(answer);
  };
  return { wrap, call };
}

const CONFINED_NODE = ["--confine", "--allow-exec-support", "--allow-read", NODE_HOME, "--allow-read", FIXTURES];

/** What the filesystem server needs to run at all: Node, and its own code. */
const CONFINED_FILESYSTEM = ["--confine", "--allow-exec-support", "--allow-read", NODE_HOME, "--allow-read", NODE_MODULES];

describe("aegis wrap --confine: the official filesystem server held to what was granted", () => {
  it("[M17.14] reads in the granted folder, never the secret one beside it; writes only where write was granted", async () => {
    const w = await workspace();
    const { root, granted } = tree(w);
    const readOnly = await filesystem(w, root, [...CONFINED_FILESYSTEM, "--allow-read", granted]);
    expect(textOf(await readOnly.client.callTool({ name: "read_text_file", arguments: { path: join(granted, "notes.md") } }))).toContain("ship on friday");
    const secret = await readOnly.client.callTool({ name: "read_text_file", arguments: { path: join(root, "secret", "key.txt") } });
    expect(secret.isError).toBe(true);
    expect(textOf(secret)).not.toContain(SECRET);
    const written = await readOnly.client.callTool({ name: "write_file", arguments: { path: join(granted, "new.md"), content: "landed" } });
    expect(written.isError).toBe(true);
    await readOnly.client.close();
    expect(existsSync(join(granted, "new.md"))).toBe(false);

    const writable = await filesystem(w, root, [...CONFINED_FILESYSTEM, "--allow-write", granted]);
    expect((await writable.client.callTool({ name: "write_file", arguments: { path: join(granted, "new.md"), content: "landed" } })).isError).not.toBe(true);
    await writable.client.close();
    expect(readFileSync(join(granted, "new.md"), "utf8")).toBe("landed");

    // The secret's bytes reached nothing wrap keeps: not the record, not the Envelope.
    nowhere(w.dir, SECRET);
    expect(await verdictOf(w.audit)).toBe("verified");
    const opens = linesOf(w.audit).filter((l) => l.line_type === "open");
    expect(opens.map((o) => o["confinement"])).toEqual([
      expect.objectContaining({
        mechanism: "bubblewrap",
        read: [NODE_HOME, granted, NODE_MODULES].sort(),
        write: [],
        net: [],
        exec_support: true,
        best_effort: false,
        not_enforced: [],
      }),
      expect.objectContaining({ mechanism: "bubblewrap", read: [NODE_HOME, granted, NODE_MODULES].sort(), write: [granted], net: [] }),
    ]);
    const shown = aegis(["show", w.audit]);
    expect(shown.stdout).toMatch(/confined {4}bubblewrap \d+\.\d+/);
    expect(shown.stdout).toContain(`    write     ${granted}\n`);
  }, 120_000);

  it("[M17.14] a server that reads whatever path it is given reads no ungranted file, directly or through /proc/<pid>/root", async () => {
    const w = await workspace();
    const { secret } = tree(w);
    const { wrap, call } = await reach(w, CONFINED_NODE);
    const key = join(secret, "key.txt");
    expect(await call("read", { path: key })).toMatch(/^ERR ENOENT/);
    const { ppid } = JSON.parse(await call("whoami", {})) as { ppid: number };
    for (const pid of [ppid, 1, wrap.child.pid ?? 0, process.pid]) expect(await call("read", { path: `/proc/${pid}/root${key}` })).toMatch(/^ERR /);
    // Nor wrap's environment, whatever pid it is looked for under.
    for (const pid of [wrap.child.pid ?? 0, process.pid]) expect(await call("read", { path: `/proc/${pid}/environ` })).toMatch(/^ERR /);
    wrap.end();
    expect((await wrap.finished()).code).toBe(0);
    expect(wrap.stdout.join("")).not.toContain(SECRET);
  }, 60_000);
});

describe("aegis wrap --confine --listen: every session's server confined", () => {
  it("[M17.14] a session's server reads no ungranted file, and its record names the grants", async () => {
    const w = await workspace();
    const { secret } = tree(w);
    const { wrap, url, authorization } = await listening([
      "wrap",
      "--audit",
      w.audit,
      "--signing-key",
      w.key,
      "--listen",
      "127.0.0.1:0",
      ...CONFINED_NODE,
      "--",
      process.execPath,
      REACH,
    ]);
    const post = async (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...authorization, ...headers },
        body: JSON.stringify(body),
      });
    const init = await post(INIT);
    const session = init.headers.get("mcp-session-id") ?? "";
    await init.text();
    const read = await post(
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read", arguments: { path: join(secret, "key.txt") } } },
      { "mcp-session-id": session },
    );
    const text = await read.text();
    expect(text).toContain("ERR ENOENT");
    expect(text).not.toContain(SECRET);
    wrap.child.kill("SIGTERM");
    expect((await wrap.finished()).code).toBe(128 + 15);
    expect(linesOf(w.audit)[0]?.["confinement"]).toMatchObject({ mechanism: "bubblewrap", read: [NODE_HOME, FIXTURES].sort(), exec_support: true });
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);
});

describe("aegis wrap --confine: the network", () => {
  let listener: Server;
  let port = 0;
  const seen: string[] = [];
  beforeAll(async () => {
    listener = createServer((req, res) => {
      seen.push(req.url ?? "");
      res.end("hello from the host\n");
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const address = listener.address();
    port = typeof address === "object" && address !== null ? address.port : 0;
  });
  afterAll(() => listener.close());

  it("[M17.14] none without --allow-net: curl in the server's tree reaches nothing, and the listener sees no request", async () => {
    const w = await workspace();
    const { wrap, call } = await reach(w, CONFINED_NODE);
    expect(await call("fetch", { url: `http://127.0.0.1:${port}/none` })).toMatch(/^ERR curl/);
    wrap.end();
    await wrap.finished();
    expect(seen).not.toContain("/none");
  }, 60_000);

  it("[M17.14] with --allow-net 127.0.0.1:<port>, that destination and no other", async () => {
    const w = await workspace();
    const other = createServer((_req, res) => res.end("other\n"));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherAddress = other.address();
    const otherPort = typeof otherAddress === "object" && otherAddress !== null ? otherAddress.port : 0;
    try {
      const { wrap, call } = await reach(w, [...CONFINED_NODE, "--allow-net", `127.0.0.1:${port}`]);
      expect(await call("fetch", { url: `http://127.0.0.1:${port}/granted` })).toBe("hello from the host\n");
      expect(await call("fetch", { url: `http://127.0.0.1:${otherPort}/other` })).toMatch(/^ERR curl/);
      wrap.end();
      expect((await wrap.finished()).code).toBe(0);
      expect(seen).toContain("/granted");
      expect(linesOf(w.audit)[0]?.["confinement"]).toMatchObject({ net: [`127.0.0.1:${port}`], not_enforced: [] });
      expect(await verdictOf(w.audit)).toBe("verified");
    } finally {
      other.close();
    }
  }, 60_000);
});

describe("aegis wrap --confine: fail closed", () => {
  const noBwrap = { PATH: "/nonexistent" };

  it("[M17.14] with bubblewrap off PATH, refuses to start: error and help, exit 1, nothing relayed", async () => {
    const w = await workspace();
    const log = join(w.dir, "started");
    const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, ...CONFINED_NODE, "--", "/bin/sh", "-c", `echo ran > ${log}`], {
      env: noBwrap,
    });
    wrap.end();
    expect((await wrap.finished()).code).toBe(1);
    expect(wrap.stderr).toContain("error: bubblewrap (bwrap) is not on PATH: the server would not be confined");
    expect(wrap.stderr).toContain("help: install bubblewrap");
    expect(wrap.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(log)).toBe(false);
    expect(existsSync(w.audit)).toBe(false);
  }, 60_000);

  it("[M17.14] with --best-effort, the server runs, said on stderr, and the record says mechanism none", async () => {
    const w = await workspace();
    const { wrap, call } = await reach(w, [...CONFINED_NODE, "--best-effort"], noBwrap);
    expect(await call("whoami", {})).toMatch(/"pid"/);
    wrap.end();
    expect((await wrap.finished()).code).toBe(0);
    expect(wrap.stderr).toContain("the server runs NOT confined");
    expect(linesOf(w.audit)[0]?.["confinement"]).toEqual({
      mechanism: "none",
      version: "",
      read: [NODE_HOME, FIXTURES].sort(),
      write: [],
      net: [],
      exec_support: true,
      best_effort: true,
      not_enforced: ["read", "write", "net"],
    });
    expect(aegis(["show", w.audit]).stdout).toContain("confined    none: the server was NOT confined (best effort)");
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);

  it("[M17.14] with no grant, the server cannot start, and wrap says which flag is missing", async () => {
    const w = await workspace();
    const wrap = new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, "--confine", "--", process.execPath, REACH]);
    wrap.send(JSON.stringify(INIT));
    await wrap.stderrHas("could not start inside its confinement");
    wrap.end();
    expect((await wrap.finished()).code).toBe(1);
    expect(wrap.stderr).toContain("--allow-exec-support");
    expect(await verdictOf(w.audit)).toBe("verified");
  }, 60_000);
});
