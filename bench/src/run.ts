import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { availableParallelism, cpus, release, totalmem, type } from "node:os";
import { fileURLToPath } from "node:url";

/**
 * `npm run bench`: every bench, one after another, each printing as it goes; then
 * bench/RESULTS.md is written from what they printed, with the commands, the machine and the
 * commit. RESULTS.md is never typed by hand: run this again to change it.
 * `npm run bench -- chain verify` runs only those (RESULTS.md is then not written).
 */
const BENCHES = [
  { name: "chain", what: "the writer: 64 concurrent writers and one call at a time, beside sign and fsync" },
  { name: "verify", what: "the verifier on every core, small records, recheck through the CLI, many files, peak memory" },
  {
    name: "verify-scale",
    what: "the calling thread's share of verify's CPU and peak RSS at 1, 2, 4, 8 and 15 threads, and peak RSS at 10,000,000 Lines on 15 threads",
  },
  { name: "envelope", what: "the Envelope store: puts, gets, open" },
  { name: "recheck", what: "recheck of a million Lines under two Policy Sets, beside verify" },
  { name: "wrap", what: "what aegis wrap and recordingTransport add to a tools/call" },
  { name: "wrap-http", what: "what aegis wrap adds to a tools/call over Streamable HTTP, beside the same server direct" },
  { name: "checkpoint", what: "the tree a checkpoint needs, beside hashing the Lines" },
  { name: "report", what: "the page of aegis report on 100,000 calls in headless Chromium, beside aegis verify" },
  { name: "show", what: "aegis show --path and --host on 10,000,000 Lines and a tenth of that, beside aegis verify: time and peak memory" },
  { name: "start-up", what: "aegis --version and verify of a small record, from the packages and from the one file, beside node -e 0" },
] as const;

const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !BENCHES.some((b) => b.name === a));
if (unknown.length > 0) throw new Error(`no bench named ${unknown.join(", ")}; the benches: ${BENCHES.map((b) => b.name).join(", ")}`);
const chosen = asked.length === 0 ? BENCHES : BENCHES.filter((b) => asked.includes(b.name));

function runOne(name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL(`./${name}.js`, import.meta.url))], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      out += text;
      process.stdout.write(text);
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`bench ${name} exited ${code}`))));
  });
}

const started = new Date();
const outputs: { readonly name: string; readonly what: string; readonly out: string; readonly seconds: number }[] = [];
for (const bench of chosen) {
  const t = process.hrtime.bigint();
  const out = await runOne(bench.name);
  outputs.push({ ...bench, out, seconds: Number(process.hrtime.bigint() - t) / 1e9 });
  process.stdout.write("\n");
}

if (asked.length === 0) {
  const commit = (() => {
    try {
      return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    } catch {
      return "unknown";
    }
  })();
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const fence = "```";
  const body = [
    "# Benchmark results",
    "",
    "Written by `npm run bench` (bench/src/run.ts) from what the benches printed in one run; not edited by hand.",
    "Each figure stands beside the cost of its primitive measured in the same run, as a ratio: a slow or busy",
    "machine reads as slow, not as broken. Figures on a shared machine vary from minute to minute.",
    "",
    `- Run: ${started.toISOString()} at commit ${commit}, ${(outputs.reduce((s, o) => s + o.seconds, 0) / 60).toFixed(0)} minutes in all`,
    `- Machine: ${cpu}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${type()} ${release()}`,
    `- Node ${process.version}`,
    "",
    ...outputs.flatMap((o) => [
      `## ${o.name}: ${o.what}`,
      "",
      `\`npm run bench:${o.name}\` (\`node bench/dist/${o.name}.js\`), ${o.seconds.toFixed(0)} s`,
      "",
      fence,
      o.out.trimEnd(),
      fence,
      "",
    ]),
  ].join("\n");
  writeFileSync(fileURLToPath(new URL("../RESULTS.md", import.meta.url)), body);
  process.stdout.write("bench/RESULTS.md written\n");
}
