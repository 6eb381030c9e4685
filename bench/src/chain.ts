import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordWriter, PolicySetHash, PrevHash, RequestDigest, SigningKey, LineHash, type OutcomePayload } from "@aegis/format";
import { sealLine, verifyStrict, verifyingKey } from "@aegis/format/internal";
import { fmt, median, timeSync, verdict } from "./measure.js";

/**
 * `npm run bench:chain`: the writer, each figure printed beside
 * the same run's cost of the primitive that bounds it. Nothing here is asserted; the
 * targets are printed as ratios so a slow machine reads as slow, not as broken.
 */
const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const CONCURRENT_LINES = argValue("--concurrent-lines", 10_000);
const SEQUENTIAL_CALLS = argValue("--calls", 400);
const ROUNDS = argValue("--rounds", 5);

const dir = mkdtempSync(join(tmpdir(), "aegis-bench-"));
const key = SigningKey.generate();
const policy = PolicySetHash.of("bench-policy");

function outcome(i: number): OutcomePayload {
  return {
    call_id: `call-${i}`,
    tool_id: "fs.read",
    request_digest: RequestDigest.of(Buffer.from(`{"jsonrpc":"2.0","id":${i},"method":"tools/call"}`)),
    policy_set_hash: policy,
    policy: { status: "allowed" },
    capability: { status: "denied", reason: "not evaluated" },
    execution: { status: "success" },
    wall_ms: 12,
    decision_axes: {
      capability: "fs.read",
      role: "ops",
      session: "bench",
      matched_rule: "allow-workspace-read",
      fs: { path_raw: "./notes.md", path_canonical: "/workspace/notes.md" },
    },
  };
}

// A representative signed outcome line, for the primitive costs.
const sample = sealLine({ ...outcome(1), schema_version: 2, line_type: "outcome", seq: 7, prev_hash: PrevHash.GENESIS }, key);
const sampleBytes = Buffer.from(sample.text);
const signingInput = Buffer.from(sample.text.replace(/,"signature":"[0-9a-f]{128}"/, ""));
const signature = key.sign(signingInput);
const vk = verifyingKey(key.publicKey);
if (typeof vk === "string") throw new Error("bench key does not decode");

/**
 * One signature made right after an fsync returns, as a sequential writer makes it: the
 * kernel's flush has just run on this core, and what the signature needs is no longer in
 * its caches. Measured because it, not the warm figure above, is what a one-at-a-time call
 * pays.
 */
function signAfterFsync(n: number): number {
  const path = join(dir, "cold.bin");
  const fd = openSync(path, "a");
  const line = Buffer.from(`${sample.text}\n`);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    writeSync(fd, line);
    fsyncSync(fd);
    samples.push(timeSync(() => key.sign(signingInput), 1, 0));
  }
  closeSync(fd);
  rmSync(path);
  return median(samples);
}

function fsyncCost(n: number): number {
  const path = join(dir, "fsync.bin");
  const fd = openSync(path, "a");
  const line = Buffer.from(`${sample.text}\n`);
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

const primitives = {
  sha256: timeSync(() => LineHash.of(sampleBytes), 5000),
  sign: timeSync(() => key.sign(signingInput), 2000),
  verify: timeSync(() => verifyStrict(vk, signingInput, signature), 2000),
  fsync: fsyncCost(300),
  signAfterFsync: signAfterFsync(300),
};

console.log(`aegis bench (node ${process.version}, ${new Date().toISOString().slice(0, 10)})`);
console.log("");
console.log(`primitives, median, this run (a signed outcome line is ${sampleBytes.length} bytes)`);
console.log(`  SHA-256 of a line         ${fmt(primitives.sha256)}`);
console.log(`  Ed25519 sign              ${fmt(primitives.sign)} (${fmt(primitives.signAfterFsync)} right after an fsync)`);
console.log(`  Ed25519 verify (strict)   ${fmt(primitives.verify)}`);
console.log(`  write + fsync of a line   ${fmt(primitives.fsync)}`);
console.log("");

// Writer: 64 concurrent writers, each awaiting durability before its next append. Two
// workloads: calls (an unsigned intent, then a signed outcome: the lines a writer makes, so
// the one the target is read on), and signed outcomes only (the worst case, printed for
// reference: every line pays a signature, and signatures are made one after another because
// each signs the hash of the line before; see adr/0004). The target is a
// long-running writer's amortized cost, so each workload first runs one untimed round (the
// first round of a process also pays for compiling the code), then ROUNDS timed rounds,
// of which the median is reported, because a shared machine's disk and CPU vary from
// second to second.
async function concurrent(kind: "calls" | "outcomes", round: number): Promise<number> {
  const path = join(dir, `concurrent-${kind}-${round}.aarl`);
  const writer = await RecordWriter.open(path, { key });
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < CONCURRENT_LINES) {
        const o = outcome(next);
        if (kind === "calls") {
          next += 2;
          await writer.intent({ call_id: o.call_id, tool_id: o.tool_id, request_digest: o.request_digest, policy_set_hash: o.policy_set_hash });
        } else {
          next += 1;
        }
        await writer.outcome(o);
      }
    }),
  );
  const us = Number(process.hrtime.bigint() - started) / 1000 / next;
  await writer.close();
  rmSync(path);
  return us;
}

console.log("writer");
for (const kind of ["calls", "outcomes"] as const) {
  const rounds: number[] = [];
  await concurrent(kind, -1);
  for (let round = 0; round < ROUNDS; round++) rounds.push(await concurrent(kind, round));
  const us = median(rounds);
  const label = kind === "calls" ? "calls (intent + outcome)" : "signed outcomes only";
  console.log(`  64 concurrent writers, ${label}, ${CONCURRENT_LINES} durable lines x ${ROUNDS} rounds: ${rounds.map(fmt).join(", ")} per line`);
  const against = kind === "calls" ? `target ≤ 50 µs: ${verdict(us <= 50)} (${(us / 50).toFixed(2)}x the target; ` : "worst case, no target (";
  console.log(`    median ${fmt(us)}/line, ${Math.round(1e6 / us)} lines/s; ${against}${(us / primitives.sign).toFixed(2)}x one sign)`);
}

// Writer: one call at a time, intent and outcome each awaited (each durable). Each call is
// followed by two raw write+fsync pairs on a file beside it, so that the ratio compares
// like with like under the disk's conditions of the moment.
{
  const path = join(dir, "sequential.aarl");
  const side = openSync(join(dir, "side.bin"), "a");
  const line = Buffer.from(`${sample.text}\n`);
  const writer = await RecordWriter.open(path, { key });
  const calls: number[] = [];
  const pairs: number[] = [];
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) {
    const o = outcome(i);
    let t = process.hrtime.bigint();
    await writer.intent({ call_id: o.call_id, tool_id: o.tool_id, request_digest: o.request_digest, policy_set_hash: o.policy_set_hash });
    await writer.outcome(o);
    calls.push(Number(process.hrtime.bigint() - t) / 1000);
    t = process.hrtime.bigint();
    writeSync(side, line);
    fsyncSync(side);
    writeSync(side, line);
    fsyncSync(side);
    pairs.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  await writer.close();
  closeSync(side);
  const us = median(calls);
  const two = median(pairs);
  console.log(`  sequential calls (intent + outcome, both durable), ${SEQUENTIAL_CALLS} calls: ${fmt(us)}/call (median)`);
  console.log(`    two write+fsync pairs, interleaved: ${fmt(two)}; target ≤ 1.2x: ${verdict(us <= 1.2 * two)} (${(us / two).toFixed(2)}x)`);
  console.log(
    `    the writer's own time per call (the call less the two pairs): ${fmt(us - two)}, ${((us - two) / primitives.signAfterFsync).toFixed(1)}x one signature right after an fsync`,
  );
  rmSync(path);
}

// The verifier's figures are bench/src/verify.ts's.
rmSync(dir, { recursive: true, force: true });
