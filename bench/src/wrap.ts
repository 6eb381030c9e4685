import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SigningKey, writeKeyFile } from "@aegis/format";
import { fmt, median, verdict } from "./measure.js";

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
const IN_FLIGHT = 16;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "packages/cli/bin/aegis.js");
const SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "aegis-bench-wrap-"));
const keyPath = join(dir, "signing.key");
await writeKeyFile(keyPath, SigningKey.generate());
const policyPath = join(dir, "policy.yaml");
writeFileSync(policyPath, "version: 2\ndefault: deny\nrules:\n  - { id: echo, action: allow, tool: echo }\n");

/** A client that writes frames and matches answers by id. */
class RawClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private parts: Buffer[] = [];
  private readonly waiting = new Map<number, (at: bigint) => void>();
  private nextId = 1;

  constructor(command: string, argv: readonly string[]) {
    this.child = spawn(command, [...argv], { stdio: "pipe" });
    this.child.stderr.resume();
    this.child.stdout.on("data", (chunk: Buffer) => {
      const at = process.hrtime.bigint();
      let start = 0;
      let newline;
      while ((newline = chunk.indexOf(0x0a, start)) !== -1) {
        this.parts.push(chunk.subarray(start, newline));
        const message = JSON.parse(Buffer.concat(this.parts).toString("utf8")) as { id?: number };
        this.parts = [];
        if (typeof message.id === "number") this.waiting.get(message.id)?.(at);
        start = newline + 1;
      }
      if (start < chunk.length) this.parts.push(chunk.subarray(start));
    });
  }

  /** Send a request; resolves with its latency in µs, from the write to the answer's arrival. */
  request(method: string, params: unknown): Promise<number> {
    const id = this.nextId++;
    const sent = process.hrtime.bigint();
    const answered = new Promise<number>((resolve) => this.waiting.set(id, (at) => resolve(Number(at - sent) / 1000)));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered.finally(() => this.waiting.delete(id));
  }

  async initialize(): Promise<void> {
    await this.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } });
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    await this.request("tools/list", {});
  }

  call(): Promise<number> {
    return this.request("tools/call", { name: "echo", arguments: { message: "bench" } });
  }

  ping(): Promise<number> {
    return this.request("ping", {});
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 8000))]);
    this.child.kill("SIGKILL");
  }
}

type Setup = "direct" | "wrap" | "wrap --envelope" | "wrap --policy";

function start(setup: Setup, round: number): RawClient {
  if (setup === "direct") return new RawClient(process.execPath, [SERVER, "stdio"]);
  const audit = join(dir, `r${round}-${setup.replace(/\W+/g, "-")}.aarl`);
  const extra = setup === "wrap --envelope" ? ["--envelope", `${audit}.envelope`] : setup === "wrap --policy" ? ["--policy", policyPath] : [];
  return new RawClient(process.execPath, [BIN, "wrap", "--audit", audit, "--signing-key", keyPath, ...extra, "--", process.execPath, SERVER, "stdio"]);
}

async function sequential(client: RawClient, n: number): Promise<number[]> {
  for (let i = 0; i < 30; i++) await client.call();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await client.call());
  return samples;
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

const SETUPS: readonly Setup[] = ["direct", "wrap", "wrap --envelope", "wrap --policy"];
const seq = new Map<Setup, number[][]>(SETUPS.map((s) => [s, []]));
const flight = new Map<Setup, { samples: number[]; perCall: number }[]>(SETUPS.map((s) => [s, []]));
const fsyncs: number[] = [];
const idleFsyncs: number[] = [];
/** ping is relayed and not recorded: what the relay costs without the record. */
const pings = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));

console.log(`aegis wrap: added latency per tools/call (server-everything echo; ${ROUNDS} rounds of ${SEQUENTIAL} sequential and ${IN_FLIGHT_CALLS} with ${IN_FLIGHT} in flight)`);
for (let round = 0; round < ROUNDS; round++) {
  fsyncs.push(fsyncCost(200));
  idleFsyncs.push(fsyncCost(100, 300));
  for (const setup of SETUPS) {
    const client = start(setup, round);
    await client.initialize();
    seq.get(setup)?.push(await sequential(client, SEQUENTIAL));
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
const directFlightSamples = (flight.get("direct") ?? []).flatMap((r) => r.samples);

console.log(`\none write+fsync (400 B) in this run: ${fmt(fsync)} (median of ${fsyncs.length} x 200); after 300 µs asleep, as a relayed call's intent: ${fmt(median(idleFsyncs))}\n`);
console.log(`${"".padEnd(18)}${"sequential median".padStart(19)}${"p99".padStart(11)}${"16 in flight: median".padStart(23)}${"p99".padStart(11)}${"wall per call".padStart(15)}`);
for (const setup of SETUPS) {
  const s = all(seq.get(setup));
  const f = flight.get(setup) ?? [];
  const samples = f.flatMap((r) => r.samples);
  console.log(`${setup.padEnd(18)}${fmt(median(s)).padStart(19)}${fmt(p99(s)).padStart(11)}${fmt(median(samples)).padStart(23)}${fmt(p99(samples)).padStart(11)}${fmt(median(f.map((r) => r.perCall))).padStart(15)}`);
}

console.log("\nadded by wrap, per call (wrapped minus direct), and as fsyncs of this run:");
for (const setup of SETUPS.slice(1)) {
  const s = all(seq.get(setup));
  const f = flight.get(setup) ?? [];
  const addedSeq = median(s) - median(directSeq);
  const addedSeqP99 = p99(s) - p99(directSeq);
  const addedFlight = median(f.map((r) => r.perCall)) - median(directFlight);
  const addedFlightMedian = median(f.flatMap((r) => r.samples)) - median(directFlightSamples);
  console.log(
    `  ${setup.padEnd(16)} sequential ${fmt(addedSeq)} median (${(addedSeq / fsync).toFixed(2)} fsyncs), ${fmt(addedSeqP99)} p99 (${(addedSeqP99 / fsync).toFixed(2)}); ` +
      `16 in flight ${fmt(addedFlight)} wall per call (${(addedFlight / fsync).toFixed(2)} fsyncs), ${fmt(addedFlightMedian)} median latency (${(addedFlightMedian / fsync).toFixed(2)})`,
  );
}

const relayOnly = median(pings.get("wrap") ?? []) - median(pings.get("direct") ?? []);
console.log(`\nthe relay alone (a ping, relayed and not recorded): ${fmt(median(pings.get("direct") ?? []))} direct, ${fmt(median(pings.get("wrap") ?? []))} through wrap: ${fmt(relayOnly)} added by the two extra pipe hops`);

const plainSeq = median(all(seq.get("wrap"))) - median(directSeq);
const plainFlight = median((flight.get("wrap") ?? []).map((r) => r.perCall)) - median(directFlight);
const seqTarget = 1.5 * fsync + 200;
console.log(`\ntargets (wrap, no Envelope):`);
console.log(`  sequential: added ${fmt(plainSeq)} <= 1.5 fsyncs + 0.2 ms = ${fmt(seqTarget)}: ${verdict(plainSeq <= seqTarget)}`);
console.log(`  16 in flight: added ${fmt(plainFlight)} per call <= 0.3 fsyncs = ${fmt(0.3 * fsync)}: ${verdict(plainFlight <= 0.3 * fsync)}`);
console.log(`  (the reference's published figure: 4.37 ms per recorded call, two fsyncs on the client's path)`);
rmSync(dir, { recursive: true, force: true });
