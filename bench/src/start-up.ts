import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, verdict } from "./measure.js";
import { verifyRecord } from "@aegis/format";

/**
 * How fast `aegis` starts (ADR 0023): `aegis --version` and `aegis verify` of a small record
 * (the reference's golden Session, 12 Lines), from the bin a checkout or an install runs
 * (which answers `--version` itself and runs its one file for anything else, ADR 0045) and
 * from the one file alone (dist/aegis.mjs, built afresh here), and `verify` from the packages'
 * modules (as the bin ran it before ADR 0045), each as a ratio to `node -e 0`
 * measured in the same rounds, interleaved, so that a busy machine slows all of them alike.
 * Targets: 2x from the bin, 1.5x from the one file; verify close to --version plus the
 * verification itself (measured in process, warm).
 *
 *   npm run bench:start-up [-- --rounds N]   (default 40)
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "packages/cli/bin/aegis.js");
const GOLDEN = join(ROOT, "vectors/external/rust-aegis/golden-session.aarl");
const arg = process.argv.indexOf("--rounds");
const ROUNDS = arg > 0 ? Number(process.argv[arg + 1]) : 40;
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1) throw new Error("--rounds wants a whole number");

const dir = mkdtempSync(join(tmpdir(), "aegis-bench-start-up-"));
try {
  const bundle = join(dir, "aegis.mjs");
  const built = spawnSync(process.execPath, [join(ROOT, "scripts/bundle.mjs"), bundle], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`the bundle could not be built:\n${built.stderr}`);
  // The CLI from the packages' compiled modules, a file each, as the bin ran it before ADR
  // 0045: the runner the start-up tests read the module graph through.
  const modules = join(ROOT, "packages/cli/test/support/unbundled-cli.mjs");
  const key = (JSON.parse(readFileSync(GOLDEN, "utf8").split("\n")[0] ?? "") as { public_key: string }).public_key;
  const verify = ["verify", "--key", key, GOLDEN];

  const runs: Record<string, readonly string[]> = {
    "node -e 0": ["-e", "0"],
    "bin: aegis --version": [BIN, "--version"],
    "one file: aegis --version": [bundle, "--version"],
    "bin: aegis verify": [BIN, ...verify],
    "one file: aegis verify": [bundle, ...verify],
    "modules: aegis verify": [modules, ...verify],
  };
  const samples = new Map<string, number[]>(Object.keys(runs).map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, args] of Object.entries(runs)) {
      const t = process.hrtime.bigint();
      const ran = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "ignore"] });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (ran.status !== 0) throw new Error(`${name} exited ${String(ran.status)}`);
      samples.get(name)?.push(ms);
    }
  }
  const ms = (name: string): number => median(samples.get(name) ?? []);
  const node = ms("node -e 0");

  // The verification itself, warm, in this process: what verify adds beyond starting.
  for (let i = 0; i < 20; i++) await verifyRecord({ path: GOLDEN }, { trust: [key], threads: 0 });
  const own: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = process.hrtime.bigint();
    await verifyRecord({ path: GOLDEN }, { trust: [key], threads: 0 });
    own.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const verifying = median(own);

  const out = (text: string): boolean => process.stdout.write(`${text}\n`);
  const bundleBytes = readFileSync(bundle).length;
  out(`aegis start-up bench (node ${process.version}): medians of ${ROUNDS} interleaved rounds; one file ${(bundleBytes / 1024).toFixed(0)} KiB`);
  out("");
  out(`node -e 0                   ${node.toFixed(1)} ms`);
  const row = (name: string, target?: number): void => {
    const ratio = ms(name) / node;
    const goal = target === undefined ? "" : `  (target ${target}x: ${verdict(ratio <= target)})`;
    out(`${name.padEnd(27)} ${ms(name).toFixed(1)} ms  ${ratio.toFixed(2)}x node -e 0${goal}`);
  };
  row("bin: aegis --version", 2);
  row("one file: aegis --version", 1.5);
  row("bin: aegis verify");
  row("one file: aegis verify");
  row("modules: aegis verify");
  out("");
  out(`the verification itself (12 Lines, 6 signatures, in process, warm): ${verifying.toFixed(2)} ms`);
  for (const from of ["bin", "one file"]) {
    const extra = ms(`${from}: aegis verify`) - ms(`${from}: aegis --version`);
    out(`${from}: verify costs ${extra.toFixed(1)} ms more than --version (loading the verifier and its command, then verifying)`);
  }

  // Where valgrind is installed: the instructions each run executes, which a busy machine
  // does not change as it changes times (cachegrind's count, one run each).
  if (spawnSync("valgrind", ["--version"]).status === 0) {
    const instructions = (args: readonly string[]): number => {
      const ran = spawnSync("valgrind", ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", process.execPath, ...args], {
        encoding: "utf8",
        stdio: ["ignore", "ignore", "pipe"],
      });
      const count = /I\s+refs:\s+([\d,]+)/.exec(ran.stderr)?.[1];
      if (ran.status !== 0 || count === undefined) throw new Error(`valgrind: ${ran.stderr.slice(-500)}`);
      return Number(count.replaceAll(",", ""));
    };
    const counted = new Map(Object.entries(runs).map(([name, args]) => [name, instructions(args)]));
    const base = counted.get("node -e 0") ?? 1;
    out("");
    out(`instructions executed (valgrind cachegrind), as ratios to node -e 0 (${(base / 1e6).toFixed(0)} million):`);
    for (const [name, count] of counted) if (name !== "node -e 0") out(`  ${name.padEnd(27)} ${(count / base).toFixed(2)}x`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
