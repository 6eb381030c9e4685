import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from "node:child_process";
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SigningKey } from "@aegis/format";
import { writeKeyFile } from "@aegis/format/internal";
import { fmt, median, processCpuUs, verdict } from "./measure.js";

/**
 * `npm run bench:wrap-http`: what `aegis wrap` adds to each tools/call over Streamable HTTP,
 * beside the same server reached directly, in one run (SPEC §17.10). The server is
 * server-everything's `echo` in its Streamable HTTP mode. Four ways to it:
 *
 * - direct: a client over HTTP to the server;
 * - sdk transport: the MCP SDK's client transport, in process, to the server: what a client
 *   library costs, beside which wrap's own client (SPEC §17.10) is read;
 * - wrap --url: a client on stdio to wrap, wrap over HTTP to the server;
 * - wrap --listen --url: a client over HTTP to wrap, wrap over HTTP to the server.
 *
 * Sequential calls and 16 in flight, median and p99, each beside the direct figure as a
 * ratio, and what is added as a ratio to one write+fsync measured in the same run (a call's
 * intent costs one); a ping (relayed, not recorded) shows the hops alone. Rounds alternate the
 * four, so a machine that speeds up or slows down part-way shifts them alike. The clients
 * write their requests themselves, so that what is timed is the relay and the server, not a
 * client library.
 */
const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SEQUENTIAL = argValue("--calls", 200);
const IN_FLIGHT_CALLS = argValue("--in-flight-calls", 800);
const ROUNDS = argValue("--rounds", 3);
/** Calls made before the sequential ones are timed: wrap is a long-lived proxy, its steady state is what is measured. */
const WARM_UP = argValue("--warm-up", 2000);
const IN_FLIGHT = 16;

// The SDK's transport adds an abort listener to one signal on every POST and never removes it:
// past 1500, Node warns once per POST. Said once here; its cost stays in its figures.
process.removeAllListeners("warning");
let warned = false;
process.on("warning", (warning) => {
  if (warning.name !== "MaxListenersExceededWarning") console.error(`${warning.name}: ${warning.message}`);
  else if (!warned) console.error("note: the SDK's transport keeps an abort listener per POST (Node's MaxListenersExceededWarning, said once)");
  warned = true;
});

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "packages/cli/bin/aegis.js");
const SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "aegis-bench-wrap-http-"));
const keyPath = join(dir, "signing.key");
await writeKeyFile(keyPath, SigningKey.generate());

interface Client {
  request(method: string, params: unknown): Promise<number>;
  notify(method: string): Promise<void>;
  close(): Promise<void>;
  /** The CPU time used so far by wrap, every thread of it, in µs; undefined where no wrap stands between. */
  cpuUs(): number | undefined;
}

const INITIALIZE = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } };

/** Requests over Streamable HTTP, one POST each, kept-alive connections; the answer read off the event stream or the JSON body. */
class HttpClient implements Client {
  private nextId = 1;
  private session: string | undefined;

  /** `token`: the bearer token wrap --listen asks every request for (SPEC §17.10); `wrapPid`: that wrap's process. */
  constructor(
    private readonly url: string,
    private readonly token?: string,
    private readonly wrapPid?: number,
  ) {}

  cpuUs(): number | undefined {
    return processCpuUs(this.wrapPid);
  }

  private headers(): Record<string, string> {
    return {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      ...(this.session === undefined ? {} : { "mcp-session-id": this.session, "mcp-protocol-version": INITIALIZE.protocolVersion }),
    };
  }

  async request(method: string, params: unknown): Promise<number> {
    const id = this.nextId++;
    const sent = process.hrtime.bigint();
    const res = await fetch(this.url, { method: "POST", headers: this.headers(), body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) });
    const text = await res.text();
    const at = process.hrtime.bigint();
    if (!res.ok || !text.includes(`"id":${id}`)) throw new Error(`${method} ${id}: ${res.status} ${text.slice(0, 200)}`);
    this.session ??= res.headers.get("mcp-session-id") ?? undefined;
    return Number(at - sent) / 1000;
  }

  async notify(method: string): Promise<void> {
    const res = await fetch(this.url, { method: "POST", headers: this.headers(), body: JSON.stringify({ jsonrpc: "2.0", method }) });
    await res.text();
  }

  async close(): Promise<void> {
    if (this.session !== undefined) await fetch(this.url, { method: "DELETE", headers: this.headers() }).then((r) => r.text());
  }
}

/** The v2 SDK's Streamable HTTP client transport, in process, with no relay: a client library's own cost. */
class TransportClient implements Client {
  private readonly transport: StreamableHTTPClientTransport;
  private readonly waiting = new Map<number, (at: bigint) => void>();
  private nextId = 1;

  constructor(url: string) {
    this.transport = new StreamableHTTPClientTransport(new URL(url));
    this.transport.onmessage = (message) => {
      const id = (message as { id?: unknown }).id;
      if (typeof id === "number") this.waiting.get(id)?.(process.hrtime.bigint());
    };
  }

  async start(): Promise<this> {
    await this.transport.start();
    return this;
  }

  cpuUs(): number | undefined {
    return undefined;
  }

  async request(method: string, params: unknown): Promise<number> {
    const id = this.nextId++;
    const sent = process.hrtime.bigint();
    const answered = new Promise<number>((resolve) => this.waiting.set(id, (at) => resolve(Number(at - sent) / 1000)));
    await this.transport.send({ jsonrpc: "2.0", id, method, params } as Parameters<StreamableHTTPClientTransport["send"]>[0]);
    if (method === "initialize") this.transport.setProtocolVersion(INITIALIZE.protocolVersion);
    return answered.finally(() => this.waiting.delete(id));
  }

  async notify(method: string): Promise<void> {
    await this.transport.send({ jsonrpc: "2.0", method } as Parameters<StreamableHTTPClientTransport["send"]>[0]);
  }

  async close(): Promise<void> {
    await this.transport.terminateSession().catch(() => undefined);
    await this.transport.close();
  }
}

/** Frames on a child process's stdio: aegis wrap --url. */
class ProcessClient implements Client {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, (at: bigint) => void>();
  private nextId = 1;
  private parts: Buffer[] = [];

  constructor(argv: readonly string[]) {
    this.child = spawn(process.execPath, [...argv], { stdio: "pipe" });
    this.child.stderr.resume();
    this.child.stdout.on("data", (chunk: Buffer) => {
      const at = process.hrtime.bigint();
      let start = 0;
      let newline;
      while ((newline = chunk.indexOf(0x0a, start)) !== -1) {
        this.parts.push(chunk.subarray(start, newline));
        const message = JSON.parse(Buffer.concat(this.parts).toString("utf8")) as { id?: unknown };
        if (typeof message.id === "number") this.waiting.get(message.id)?.(at);
        this.parts = [];
        start = newline + 1;
      }
      if (start < chunk.length) this.parts.push(chunk.subarray(start));
    });
  }

  request(method: string, params: unknown): Promise<number> {
    const id = this.nextId++;
    const sent = process.hrtime.bigint();
    const answered = new Promise<number>((resolve) => this.waiting.set(id, (at) => resolve(Number(at - sent) / 1000)));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered.finally(() => this.waiting.delete(id));
  }

  notify(method: string): Promise<void> {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    return Promise.resolve();
  }

  cpuUs(): number | undefined {
    return processCpuUs(this.child.pid);
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    this.child.kill("SIGKILL");
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** A process, once its stderr matches `ready`. */
async function started(argv: readonly string[], ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; found: RegExpExecArray }> {
  const child = spawn(process.execPath, [...argv], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let said = "";
  const found = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      const m = ready.exec(said);
      if (m !== null) resolve(m);
    });
    child.once("exit", () => reject(new Error(`${argv.join(" ")} exited: ${said}`)));
  });
  child.stderr?.resume();
  return { child, found };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  child.kill("SIGKILL");
}

type Setup = "direct" | "sdk transport" | "wrap --url" | "wrap --listen --url";
const SETUPS: readonly Setup[] = ["direct", "sdk transport", "wrap --url", "wrap --listen --url"];

async function connect(setup: Setup, url: string, round: number): Promise<{ client: Client; done: () => Promise<void> }> {
  const audit = join(dir, `r${round}-${setup.replace(/\W+/g, "-")}.aarl`);
  if (setup === "direct") return { client: new HttpClient(url), done: () => Promise.resolve() };
  if (setup === "sdk transport") return { client: await new TransportClient(url).start(), done: () => Promise.resolve() };
  if (setup === "wrap --url")
    return { client: new ProcessClient([BIN, "wrap", "--audit", audit, "--signing-key", keyPath, "--url", url]), done: () => Promise.resolve() };
  const wrap = await started(
    [BIN, "wrap", "--audit", audit, "--signing-key", keyPath, "--listen", "127.0.0.1:0", "--url", url],
    /listening on (http:\/\/\S+\/mcp)/,
  );
  const token = readFileSync(`${audit}.listen-token`, "utf8").trim();
  return { client: new HttpClient(wrap.found[1] ?? "", token, wrap.child.pid), done: () => stop(wrap.child) };
}

const call = (client: Client): Promise<number> => client.request("tools/call", { name: "echo", arguments: { message: "bench" } });

/** Sequential calls: their latencies, and wrap's CPU per call where a wrap stands between, warm and over the warm-up. */
async function sequential(client: Client, n: number): Promise<{ samples: number[]; cpu: number | undefined; coldCpu: number | undefined }> {
  const start = client.cpuUs();
  for (let i = 0; i < WARM_UP; i++) await call(client);
  const samples: number[] = [];
  const before = client.cpuUs();
  for (let i = 0; i < n; i++) samples.push(await call(client));
  const after = client.cpuUs();
  return {
    samples,
    cpu: before === undefined || after === undefined ? undefined : (after - before) / n,
    coldCpu: start === undefined || before === undefined ? undefined : (before - start) / WARM_UP,
  };
}

async function inFlight(client: Client, n: number): Promise<{ samples: number[]; perCall: number }> {
  for (let i = 0; i < 32; i++) await call(client);
  const samples: number[] = [];
  let issued = 0;
  const t = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (issued < n) {
      issued++;
      samples.push(await call(client));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { samples, perCall: Number(process.hrtime.bigint() - t) / 1000 / n };
}

/** One write+fsync of a 400-byte line in the record's directory, median of `n`: the primitive the added figures are read against. */
function fsyncCost(n: number): number {
  const path = join(dir, "fsync.bin");
  const fd = openSync(path, "a");
  const line = Buffer.alloc(400, 0x61);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    writeSync(fd, line);
    fsyncSync(fd);
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  closeSync(fd);
  rmSync(path);
  return median(samples);
}

/** µs, signed: an added figure can come out below zero when the baseline's noise is larger than what is added. */
const signed = (us: number): string => (us < 0 ? `-${fmt(-us)}` : fmt(us));
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}

const port = await freePort();
const server = await started([SERVER, "streamableHttp"], /listening on port/, { PORT: String(port) });
const url = `http://127.0.0.1:${port}/mcp`;
const seq = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));
const cpu = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));
const coldCpu = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));
const flight = new Map<Setup, { samples: number[]; perCall: number }[]>(SETUPS.map((s) => [s, []]));
const fsyncs: number[] = [];
/** ping is relayed and not recorded: what the hops cost without the record. */
const pings = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));

console.log(
  `aegis wrap over Streamable HTTP: added latency per tools/call (server-everything echo, HTTP mode; ${ROUNDS} rounds of ${SEQUENTIAL} sequential after ${WARM_UP} to warm up, and ${IN_FLIGHT_CALLS} with ${IN_FLIGHT} in flight)`,
);
try {
  for (let round = 0; round < ROUNDS; round++) {
    fsyncs.push(fsyncCost(200));
    for (const setup of SETUPS) {
      const { client, done } = await connect(setup, url, round);
      await client.request("initialize", INITIALIZE);
      await client.notify("notifications/initialized");
      const run = await sequential(client, SEQUENTIAL);
      seq.get(setup)?.push(...run.samples);
      if (run.cpu !== undefined) cpu.get(setup)?.push(run.cpu);
      if (run.coldCpu !== undefined) coldCpu.get(setup)?.push(run.coldCpu);
      for (let i = 0; i < SEQUENTIAL; i++) pings.get(setup)?.push(await client.request("ping", {}));
      flight.get(setup)?.push(await inFlight(client, IN_FLIGHT_CALLS));
      await client.close();
      await done();
    }
  }
} finally {
  await stop(server.child);
}

const fsync = median(fsyncs);
const seqOf = (setup: Setup): number[] => seq.get(setup) ?? [];
const wallOf = (setup: Setup): number[] => (flight.get(setup) ?? []).map((r) => r.perCall);
const directSeq = median(seqOf("direct"));
const directWall = median(wallOf("direct"));
console.log(`\none write+fsync (400 B) in this run: ${fmt(fsync)} (median of ${fsyncs.length} x 200)\n`);
console.log(
  `${"".padEnd(22)}${"sequential median".padStart(19)}${"p99".padStart(11)}${"x direct".padStart(10)}${"16 in flight: median".padStart(23)}${"p99".padStart(11)}${"wall per call".padStart(15)}${"x direct".padStart(10)}`,
);
for (const setup of SETUPS) {
  const s = seqOf(setup);
  const samples = (flight.get(setup) ?? []).flatMap((r) => r.samples);
  const wall = median(wallOf(setup));
  console.log(
    `${setup.padEnd(22)}${fmt(median(s)).padStart(19)}${fmt(p99(s)).padStart(11)}${ratio(median(s), directSeq).padStart(10)}` +
      `${fmt(median(samples)).padStart(23)}${fmt(p99(samples)).padStart(11)}${fmt(wall).padStart(15)}${ratio(wall, directWall).padStart(10)}`,
  );
}
const added = (setup: Setup, against: Setup): string => {
  const s = median(seqOf(setup)) - median(seqOf(against));
  const sP99 = p99(seqOf(setup)) - p99(seqOf(against));
  const wall = median(wallOf(setup)) - median(wallOf(against));
  return (
    `sequential ${signed(s)} median (${(s / fsync).toFixed(2)} fsyncs), ${signed(sP99)} p99 (${(sP99 / fsync).toFixed(2)}); ` +
    `16 in flight ${signed(wall)} wall per call (${(wall / fsync).toFixed(2)} fsyncs)`
  );
};
console.log("\nadded per call, against the same server reached directly over HTTP, and as fsyncs of this run:");
for (const setup of SETUPS.filter((s) => s !== "direct")) console.log(`  ${setup.padEnd(20)} ${added(setup, "direct")}`);
console.log("beside the MCP SDK's client transport (in process, no record):");
for (const setup of ["wrap --url", "wrap --listen --url"] as const) console.log(`  ${setup.padEnd(20)} ${added(setup, "sdk transport")}`);
const ping = (setup: Setup): number => median(pings.get(setup) ?? []);
console.log(
  `\nthe hops alone (a ping, relayed and not recorded), sequential median: ${SETUPS.map((setup) => `${setup} ${fmt(ping(setup))}`).join(", ")}; ` +
    `added by wrap --url ${signed(ping("wrap --url") - ping("direct"))}, by wrap --listen --url ${signed(ping("wrap --listen --url") - ping("direct"))}`,
);
console.log(`\nCPU per sequential call (wrap, every thread), warm and over the ${WARM_UP} calls of the warm-up:`);
for (const setup of SETUPS.filter((s) => (cpu.get(s) ?? []).length > 0))
  console.log(`  ${setup.padEnd(20)} ${fmt(median(cpu.get(setup) ?? [])).padStart(9)} warm ${fmt(median(coldCpu.get(setup) ?? [])).padStart(9)} warming up`);
// Issue 49: what must be paid is the intent's fsync, one signature and one strict read each way, and an HTTP hop.
const addedBy = (setup: Setup): number => median(seqOf(setup)) - directSeq;
const urlCpu = median(cpu.get("wrap --url") ?? []);
console.log(`\ntargets (issue 49):`);
console.log(
  `  wrap --url: added ${fmt(addedBy("wrap --url"))} <= one fsync + 1.0 ms = ${fmt(fsync + 1000)}: ${verdict(addedBy("wrap --url") <= fsync + 1000)}`,
);
console.log(`  wrap --url: CPU ${fmt(urlCpu)} per call <= 1.0 ms: ${verdict(urlCpu <= 1000)}`);
console.log(
  `  wrap --listen --url: added ${fmt(addedBy("wrap --listen --url"))} <= one fsync + 2.0 ms = ${fmt(fsync + 2000)}: ${verdict(addedBy("wrap --listen --url") <= fsync + 2000)} (reported)`,
);
rmSync(dir, { recursive: true, force: true });
