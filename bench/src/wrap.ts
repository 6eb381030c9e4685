import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { SigningKey, readKeyFile } from "@aegis/format";
import { writeKeyFile } from "@aegis/format/internal";
import { recordingTransport } from "@aegis/mcp";
import { SIGNATURE_TYPE, formatVerifierKey, noteVerifier } from "@aegis/proof";
import { fmt, median, processCpuUs, verdict } from "./measure.js";

/**
 * `npm run bench:wrap`: what `aegis wrap` adds to each tools/call, against the same server
 * without it, in one run: sequential calls and 16 in flight, median and p99, each printed
 * beside one fsync measured in the same run. Rounds alternate direct and wrapped, so a
 * machine that speeds up or slows down part-way shifts both alike.
 *
 * The server is @modelcontextprotocol/server-everything's `echo`; the client writes frames
 * itself, so that what is timed is the relay and the server, not a client library.
 */
const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SEQUENTIAL = argValue("--calls", 300);
const IN_FLIGHT_CALLS = argValue("--in-flight-calls", 1600);
const ROUNDS = argValue("--rounds", 3);
/**
 * Calls made before the sequential ones are timed: V8 needs a few hundred to compile the
 * relay's path, and wrap is a long-lived proxy, so the steady state is what is measured.
 */
const WARM_UP = argValue("--warm-up", 2000);
const IN_FLIGHT = 16;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "packages/cli/bin/aegis.js");
const SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "aegis-bench-wrap-"));
const keyPath = join(dir, "signing.key");
await writeKeyFile(keyPath, SigningKey.generate());
const policyPath = join(dir, "policy.yaml");
writeFileSync(policyPath, "version: 2\ndefault: deny\nrules:\n  - { id: echo, action: allow, tool: echo }\n");

/** A client that writes requests and matches answers by id, over some link to the server. */
abstract class RawClient {
  protected readonly waiting = new Map<number, (at: bigint) => void>();
  private nextId = 1;

  protected abstract send(message: object): void;

  protected answered(message: { id?: unknown }, at: bigint): void {
    if (typeof message.id === "number") this.waiting.get(message.id)?.(at);
  }

  /** Send a request; resolves with its latency in µs, from the write to the answer's arrival. */
  request(method: string, params: unknown): Promise<number> {
    const id = this.nextId++;
    const sent = process.hrtime.bigint();
    const answered = new Promise<number>((resolve) => this.waiting.set(id, (at) => resolve(Number(at - sent) / 1000)));
    this.send({ jsonrpc: "2.0", id, method, params });
    return answered.finally(() => this.waiting.delete(id));
  }

  async initialize(): Promise<void> {
    await this.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } });
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await this.request("tools/list", {});
  }

  call(): Promise<number> {
    return this.request("tools/call", { name: "echo", arguments: { message: "bench" } });
  }

  ping(): Promise<number> {
    return this.request("ping", {});
  }

  /** The CPU time used so far by what stands between the client and the server, where it can be read. */
  cpuUs(): number | undefined {
    return undefined;
  }

  abstract close(): Promise<void>;
}

/** Frames on a child process's stdio: the server itself, or aegis wrap in front of it. */
class ProcessClient extends RawClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private parts: Buffer[] = [];

  constructor(command: string, argv: readonly string[]) {
    super();
    this.child = spawn(command, [...argv], { stdio: "pipe" });
    this.child.stderr.resume();
    this.child.stdout.on("data", (chunk: Buffer) => {
      const at = process.hrtime.bigint();
      let start = 0;
      let newline;
      while ((newline = chunk.indexOf(0x0a, start)) !== -1) {
        this.parts.push(chunk.subarray(start, newline));
        this.answered(JSON.parse(Buffer.concat(this.parts).toString("utf8")) as { id?: unknown }, at);
        this.parts = [];
        start = newline + 1;
      }
      if (start < chunk.length) this.parts.push(chunk.subarray(start));
    });
  }

  protected send(message: object): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** The CPU time the process (the server, or wrap without its server) has used, in µs: every thread of it. */
  override cpuUs(): number | undefined {
    return processCpuUs(this.child.pid);
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 8000))]);
    this.child.kill("SIGKILL");
  }
}

/** Messages on the MCP SDK's stdio transport, recorded in process or not: no relay hop. */
class TransportClient extends RawClient {
  constructor(private readonly transport: Transport) {
    super();
    transport.onmessage = (message) => this.answered(message as { id?: unknown }, process.hrtime.bigint());
  }

  static async start(recorded: string | undefined): Promise<TransportClient> {
    const stdio = new StdioClientTransport({ command: process.execPath, args: [SERVER, "stdio"], stderr: "ignore" });
    const transport = recorded === undefined ? stdio : await recordingTransport(stdio, { audit: recorded, key: await readKeyFile(keyPath) });
    const client = new TransportClient(transport);
    await transport.start();
    return client;
  }

  protected send(message: object): void {
    void this.transport.send(message as JSONRPCMessage);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

type Setup = "direct" | "wrap" | "wrap --envelope" | "wrap --policy" | "wrap --checkpoints" | "+ silent witness" | "sdk transport" | "recordingTransport";

/**
 * A witness that accepts every connection and never answers (SPEC §19.6): pushing to it must
 * cost the calls nothing, as pushes run beside them and give up after 10 s.
 */
const silentSockets: Socket[] = [];
const silent = createServer((socket) => void silentSockets.push(socket));
await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
const silentAddress = silent.address();
const SILENT_WITNESS = `${formatVerifierKey(noteVerifier("silent.example/w", SIGNATURE_TYPE.cosignatureV1, SigningKey.fromSeed(new Uint8Array(32).fill(9)).publicKey))}@http://127.0.0.1:${typeof silentAddress === "object" && silentAddress !== null ? silentAddress.port : 0}`;

async function start(setup: Setup, round: number): Promise<RawClient> {
  const audit = join(dir, `r${round}-${setup.replace(/\W+/g, "-")}.aarl`);
  if (setup === "direct") return new ProcessClient(process.execPath, [SERVER, "stdio"]);
  if (setup === "sdk transport") return TransportClient.start(undefined);
  if (setup === "recordingTransport") return TransportClient.start(audit);
  const extra =
    setup === "wrap --envelope"
      ? ["--envelope", `${audit}.envelope`]
      : setup === "wrap --policy"
        ? ["--policy", policyPath]
        : setup === "wrap --checkpoints"
          ? ["--checkpoints"]
          : setup === "+ silent witness"
            ? ["--checkpoints", "--witness", SILENT_WITNESS]
            : [];
  return new ProcessClient(process.execPath, [BIN, "wrap", "--audit", audit, "--signing-key", keyPath, ...extra, "--", process.execPath, SERVER, "stdio"]);
}

/**
 * Sequential calls: their latencies, and the CPU per call of the process the client talks
 * to, warm (after the warm-up) and cold (over the warm-up, V8's compiling included).
 */
async function sequential(client: RawClient, n: number): Promise<{ samples: number[]; cpu: number | undefined; coldCpu: number | undefined }> {
  const start = client.cpuUs();
  for (let i = 0; i < WARM_UP; i++) await client.call();
  const samples: number[] = [];
  const before = client.cpuUs();
  for (let i = 0; i < n; i++) samples.push(await client.call());
  const after = client.cpuUs();
  return {
    samples,
    cpu: before === undefined || after === undefined ? undefined : (after - before) / n,
    coldCpu: start === undefined || before === undefined ? undefined : (before - start) / WARM_UP,
  };
}

/** Closed loop, 16 calls always in flight: latencies, and the wall time per call. */
async function inFlight(client: RawClient, n: number): Promise<{ samples: number[]; perCall: number }> {
  for (let i = 0; i < 64; i++) await client.call();
  const samples: number[] = [];
  let issued = 0;
  const t = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (issued < n) {
      issued++;
      samples.push(await client.call());
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { samples, perCall: Number(process.hrtime.bigint() - t) / 1000 / n };
}

const idle = new Int32Array(new SharedArrayBuffer(4));

/**
 * One write+fsync of a 400-byte line, as the writer pays it, in the record's directory;
 * with `idleUs`, each after that long asleep, as a relay's intent comes (the disk and the
 * CPU have gone quiet meanwhile, and the pair costs more here).
 */
function fsyncCost(n: number, idleUs = 0): number {
  const path = join(dir, "fsync.bin");
  const fd = openSync(path, "a");
  const line = Buffer.alloc(400, 0x61);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    if (idleUs > 0) Atomics.wait(idle, 0, 0, idleUs / 1000);
    const t = process.hrtime.bigint();
    writeSync(fd, line);
    fsyncSync(fd);
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  closeSync(fd);
  rmSync(path);
  return median(samples);
}

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}

const SETUPS: readonly Setup[] = [
  "direct",
  "wrap",
  "wrap --envelope",
  "wrap --policy",
  "wrap --checkpoints",
  "+ silent witness",
  "sdk transport",
  "recordingTransport",
];
/** What each setup is compared with: wrap with the server alone, the recording transport with the bare one. */
const BASELINE: Readonly<Record<Setup, Setup>> = {
  direct: "direct",
  wrap: "direct",
  "wrap --envelope": "direct",
  "wrap --policy": "direct",
  "wrap --checkpoints": "direct",
  // Against checkpoints alone: what pushing each checkpoint to a witness that never answers adds.
  "+ silent witness": "wrap --checkpoints",
  "sdk transport": "sdk transport",
  recordingTransport: "sdk transport",
};
const seq = new Map<Setup, number[][]>(SETUPS.map((s) => [s, []]));
/** CPU per sequential call of the process the client talks to: the server direct, else wrap alone; warm, and over the warm-up. */
const cpu = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));
const coldCpu = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));
const flight = new Map<Setup, { samples: number[]; perCall: number }[]>(SETUPS.map((s) => [s, []]));
const fsyncs: number[] = [];
const idleFsyncs: number[] = [];
/** ping is relayed and not recorded: what the relay costs without the record. */
const pings = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));

console.log(
  `aegis wrap: added latency per tools/call (server-everything echo; ${ROUNDS} rounds of ${SEQUENTIAL} sequential after ${WARM_UP} to warm up, and ${IN_FLIGHT_CALLS} with ${IN_FLIGHT} in flight)`,
);
for (let round = 0; round < ROUNDS; round++) {
  fsyncs.push(fsyncCost(200));
  idleFsyncs.push(fsyncCost(100, 300));
  for (const setup of SETUPS) {
    const client = await start(setup, round);
    await client.initialize();
    const run = await sequential(client, SEQUENTIAL);
    seq.get(setup)?.push(run.samples);
    if (run.cpu !== undefined) cpu.get(setup)?.push(run.cpu);
    if (run.coldCpu !== undefined) coldCpu.get(setup)?.push(run.coldCpu);
    for (let i = 0; i < SEQUENTIAL; i++) pings.get(setup)?.push(await client.ping());
    flight.get(setup)?.push(await inFlight(client, IN_FLIGHT_CALLS));
    await client.close();
  }
  fsyncs.push(fsyncCost(200));
}
const fsync = median(fsyncs);
const all = (rounds: readonly number[][] | undefined): number[] => (rounds ?? []).flat();
const directSeq = all(seq.get("direct"));
const directFlight = (flight.get("direct") ?? []).map((r) => r.perCall);

console.log(
  `\none write+fsync (400 B) in this run: ${fmt(fsync)} (median of ${fsyncs.length} x 200); after 300 µs asleep, as a relayed call's intent: ${fmt(median(idleFsyncs))}\n`,
);
console.log(
  `${"".padEnd(20)}${"sequential median".padStart(19)}${"p99".padStart(11)}${"16 in flight: median".padStart(23)}${"p99".padStart(11)}${"wall per call".padStart(15)}`,
);
for (const setup of SETUPS) {
  const s = all(seq.get(setup));
  const f = flight.get(setup) ?? [];
  const samples = f.flatMap((r) => r.samples);
  console.log(
    `${setup.padEnd(20)}${fmt(median(s)).padStart(19)}${fmt(p99(s)).padStart(11)}${fmt(median(samples)).padStart(23)}${fmt(p99(samples)).padStart(11)}${fmt(median(f.map((r) => r.perCall))).padStart(15)}`,
  );
}

console.log(
  "\nadded per call (recorded minus its baseline: wrap against the server alone, recordingTransport against the bare SDK transport), and as fsyncs of this run:",
);
for (const setup of SETUPS.filter((s) => BASELINE[s] !== s)) {
  const s = all(seq.get(setup));
  const f = flight.get(setup) ?? [];
  const base = BASELINE[setup];
  const baseSeq = all(seq.get(base));
  const baseFlight = flight.get(base) ?? [];
  const addedSeq = median(s) - median(baseSeq);
  const addedSeqP99 = p99(s) - p99(baseSeq);
  const addedFlight = median(f.map((r) => r.perCall)) - median(baseFlight.map((r) => r.perCall));
  const addedFlightMedian = median(f.flatMap((r) => r.samples)) - median(baseFlight.flatMap((r) => r.samples));
  console.log(
    `  ${setup.padEnd(20)} sequential ${fmt(addedSeq)} median (${(addedSeq / fsync).toFixed(2)} fsyncs), ${fmt(addedSeqP99)} p99 (${(addedSeqP99 / fsync).toFixed(2)}); ` +
      `16 in flight ${fmt(addedFlight)} wall per call (${(addedFlight / fsync).toFixed(2)} fsyncs), ${fmt(addedFlightMedian)} median latency (${(addedFlightMedian / fsync).toFixed(2)})`,
  );
}

const relayOnly = median(pings.get("wrap") ?? []) - median(pings.get("direct") ?? []);
console.log(
  `\nthe relay alone (a ping, relayed and not recorded): ${fmt(median(pings.get("direct") ?? []))} direct, ${fmt(median(pings.get("wrap") ?? []))} through wrap: ${fmt(relayOnly)} added by the two extra pipe hops`,
);

const plainSeq = median(all(seq.get("wrap"))) - median(directSeq);
const plainFlight = median((flight.get("wrap") ?? []).map((r) => r.perCall)) - median(directFlight);
const idleFsync = median(idleFsyncs);
const wrapCpu = median(cpu.get("wrap") ?? []);
console.log(
  `\nCPU per sequential call (the process the client talks to, every thread; for wrap, without its server), warm and over the ${WARM_UP} calls of the warm-up:`,
);
for (const setup of SETUPS.filter((s) => (cpu.get(s) ?? []).length > 0))
  console.log(`  ${setup.padEnd(20)} ${fmt(median(cpu.get(setup) ?? [])).padStart(9)} warm ${fmt(median(coldCpu.get(setup) ?? [])).padStart(9)} warming up`);
// Issue 49: what must be paid is the intent's fsync (a relayed call's, after the disk was
// idle), one signature and one strict read each way.
const seqTarget = idleFsync + 600;
console.log(`\ntargets (wrap, no Envelope; issue 49):`);
console.log(`  sequential: added ${fmt(plainSeq)} <= one relayed intent's fsync + 0.6 ms = ${fmt(seqTarget)}: ${verdict(plainSeq <= seqTarget)}`);
console.log(`  CPU: wrap uses ${fmt(wrapCpu)} per call <= 0.6 ms: ${verdict(wrapCpu <= 600)}`);
console.log(`  16 in flight: added ${fmt(plainFlight)} wall per call (reported; ${(plainFlight / fsync).toFixed(2)} fsyncs)`);
console.log(`  (the reference's published figure: 4.37 ms per recorded call, two fsyncs on the client's path)`);
const silentAdded = median(all(seq.get("+ silent witness"))) - median(all(seq.get("wrap --checkpoints")));
console.log(`  a witness that never answers, against --checkpoints alone: ${fmt(silentAdded)} per sequential call (a call never waits on a witness)`);
for (const socket of silentSockets) socket.destroy();
silent.close();
rmSync(dir, { recursive: true, force: true });
