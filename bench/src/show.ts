import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SigningKey } from "@aegis/format";
import { benchEndpoint, benchPath, writeLargeRecord } from "./large-record.js";

/**
 * `node bench/dist/show.js [--lines N]`: `aegis show --path` and `--host` ("every call that
 * touched this", SPEC §13.4) over a record of N Lines (default 10,000,000) and of a tenth of
 * that, beside `aegis verify` of the same file, each in a process of its own: its time and
 * peak RSS. Every fifth call names an endpoint, the others one of 97 paths. Memory must not
 * grow with the record: the peak at N is set beside the peak at N/10. The counts the CLI
 * reports are checked against the record's own recipe, so the bench cannot measure nothing.
 */
const args = process.argv.slice(2);
const at = args.indexOf("--lines");
const LINES = at >= 0 ? Number(args[at + 1]) : 10_000_000;
if (!Number.isSafeInteger(LINES) || LINES < 40 || LINES % 20 !== 0) throw new Error("--lines wants a multiple of 20, at least 40");
const CHILD = fileURLToPath(new URL("./show-child.js", import.meta.url));
const PATH = "/workspace/notes-5.md";
const HOST = "api-3.example.com:443";

interface Run {
  readonly seconds: number;
  readonly peakKiB: number;
  readonly stdout: string;
}

function cli(argv: readonly string[]): Run {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [CHILD, ...argv], { stdio: ["ignore", "pipe", "pipe", "pipe"], maxBuffer: 1 << 30 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (run.status !== 0) throw new Error(`aegis ${argv.join(" ")}: exit ${String(run.status)}\n${run.output[2]?.toString() ?? ""}`);
  return { seconds, peakKiB: Number(run.output[3]?.toString() ?? "0"), stdout: run.output[1]?.toString() ?? "" };
}

/** What the record's recipe says `--path PATH` and `--host HOST` must find among `calls` calls. */
function expected(calls: number): { readonly path: number; readonly host: number; readonly withEndpoint: number } {
  let path = 0;
  let host = 0;
  let withEndpoint = 0;
  for (let call = 1; call <= calls; call++) {
    const endpoint = benchEndpoint(call);
    if (endpoint !== undefined) {
      withEndpoint++;
      if (`${endpoint.host}:${endpoint.port}` === HOST) host++;
    } else if (benchPath(2 * call - 1) === PATH) path++;
  }
  return { path, host, withEndpoint };
}

const mb = (kib: number): string => `${((kib * 1024) / 1e6).toFixed(0)} MB`;
const n = (x: number): string => x.toLocaleString("en-US");
const dir = mkdtempSync(join(tmpdir(), "aegis-bench-show-"));
const key = SigningKey.fromSeed(new Uint8Array(32).fill(3));

try {
  console.log(`aegis show --path/--host bench (node ${process.version}, ${availableParallelism()} cores, ${new Date().toISOString().slice(0, 10)})`);
  const peaks: { lines: number; path: number; host: number }[] = [];
  for (const lines of [LINES / 10, LINES]) {
    const record = join(dir, `record-${lines}.aarl`);
    const t = process.hrtime.bigint();
    await writeLargeRecord(record, lines, key, { hosts: true });
    const calls = (lines - 2) / 2;
    const want = expected(calls);
    console.log("");
    console.log(
      `record: ${n(lines)} Lines, ${(statSync(record).size / 1e9).toFixed(2)} GB, ${n(calls)} calls (${n(want.withEndpoint)} naming an endpoint); written in ${(Number(process.hrtime.bigint() - t) / 1e9).toFixed(1)} s`,
    );
    console.log(`                                             seconds   µs/Line   peak RSS  calls listed`);
    const verify = cli(["verify", record]);
    if (!verify.stdout.startsWith("Verified")) throw new Error(`verify: ${verify.stdout}`);
    const row = (name: string, r: Run, listed: string): void =>
      console.log(
        `  ${name.padEnd(42)} ${r.seconds.toFixed(1).padStart(6)}  ${((r.seconds * 1e6) / lines).toFixed(1).padStart(8)}  ${mb(r.peakKiB).padStart(9)}  ${listed}`,
      );
    row("aegis verify", verify, "-");
    const byPath = cli(["show", "--path", PATH, record]);
    const byHost = cli(["show", "--host", HOST, record]);
    for (const [r, count, what] of [
      [byPath, want.path, `path ${PATH}`],
      [byHost, want.host, `host ${HOST}`],
    ] as const) {
      if (!r.stdout.endsWith(`\n${count} of ${calls} calls named ${what}\n`)) throw new Error(`show ${what}: ${r.stdout.slice(-200)}`);
    }
    row(`aegis show --path ${PATH}`, byPath, `${n(want.path)}  (${(byPath.seconds / verify.seconds).toFixed(2)}x verify)`);
    row(`aegis show --host ${HOST}`, byHost, `${n(want.host)}  (${(byHost.seconds / verify.seconds).toFixed(2)}x verify)`);
    peaks.push({ lines, path: byPath.peakKiB, host: byHost.peakKiB });
    rmSync(record);
  }
  const [small, large] = peaks;
  if (small !== undefined && large !== undefined) {
    console.log("");
    console.log(
      `flat memory: peak RSS at ${n(large.lines)} Lines is ${(large.path / small.path).toFixed(2)}x (--path) and ${(large.host / small.host).toFixed(2)}x (--host) that at ${n(small.lines)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
