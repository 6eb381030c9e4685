import { createHash } from "node:crypto";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolicySetHash, PrevHash, RequestDigest, SigningKey, verifyRecord } from "@aegis/format";
import { sealLine } from "@aegis/format/internal";
import { TreeHasher, leafHash, recordTree } from "@aegis/proof";
import { median } from "./measure.js";

/**
 * `node bench/dist/checkpoint.js [--lines N] [--rounds R]`: what a checkpoint costs over a
 * record of N Lines (default 1,000,000), as ratios to the same run's cost of hashing them.
 *
 *  (a) the tree over the Lines' bytes (leaf hashes and the n-1 node hashes), against one
 *      SHA-256 per Line: the target is under 1.5x;
 *  (b) `recordTree` on the file (the verifier's walk with the tree built as it goes), against
 *      `verifyRecord` alone: what `aegis checkpoint` adds to a verify.
 *
 * Medians of R rounds (default 5). Nothing is asserted; the roots of (a) and (b) are
 * compared, so the bench cannot time a tree it did not build.
 */
const args = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isSafeInteger(value) || value < 3) throw new Error(`${name} wants an integer of at least 3`);
  return value;
};
const LINES = arg("--lines", 1_000_000);
const ROUNDS = arg("--rounds", 5);

async function writeRecord(path: string): Promise<void> {
  const key = SigningKey.fromSeed(new Uint8Array(32).fill(7));
  const hash = PolicySetHash.of("bench");
  const out = createWriteStream(path);
  const write = (text: string): Promise<void> => new Promise((resolve) => (out.write(`${text}\n`) ? resolve() : out.once("drain", resolve)));
  let tail = sealLine({ schema_version: 2, line_type: "open", seq: 0, prev_hash: PrevHash.GENESIS, public_key: key.publicKeyHex }, key);
  await write(tail.text);
  for (let seq = 1; seq < LINES - 1; seq += 1) {
    const call = `call-${Math.floor((seq + 1) / 2)}`;
    const base = {
      schema_version: 2,
      seq,
      prev_hash: PrevHash.after(tail.lineHash),
      call_id: call,
      tool_id: "fs.read",
      request_digest: RequestDigest.of(Buffer.from(call)),
    };
    tail =
      seq % 2 === 1
        ? sealLine({ ...base, line_type: "intent" })
        : sealLine(
            {
              ...base,
              line_type: "outcome",
              policy_set_hash: hash,
              policy: { status: "allowed" },
              capability: { status: "denied", reason: "not evaluated" },
              execution: { status: "success" },
              decision_axes: { role: "agent" },
            },
            key,
          );
    await write(tail.text);
  }
  await write(sealLine({ schema_version: 2, line_type: "close", seq: LINES - 1, prev_hash: PrevHash.after(tail.lineHash) }, key).text);
  await new Promise<void>((resolve) => out.end(resolve));
}

function timed<T>(fn: () => T): { ms: number; value: T } {
  const start = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

async function timedAsync<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

const dir = mkdtempSync(join(tmpdir(), "aegis-bench-checkpoint-"));
try {
  const path = join(dir, "record.aarl");
  await writeRecord(path);
  const rows = readFileSync(path)
    .toString("latin1")
    .split("\n")
    .slice(0, -1)
    .map((row) => Buffer.from(row, "latin1"));
  console.log(`checkpoint bench: ${rows.length.toLocaleString("en")} Lines, ${(statSync(path).size / 2 ** 20).toFixed(0)} MiB, ${ROUNDS} rounds (medians)`);

  const hashing: number[] = [];
  const tree: number[] = [];
  const verify: number[] = [];
  const checkpoint: number[] = [];
  let treeRoot: Buffer = Buffer.alloc(0);
  let walkRoot: Buffer = Buffer.alloc(0);
  for (let round = 0; round < ROUNDS; round += 1) {
    hashing.push(
      timed(() => {
        for (const row of rows) createHash("sha256").update(row).digest();
      }).ms,
    );
    const built = timed(() => {
      const hasher = new TreeHasher();
      for (const row of rows) hasher.add(leafHash(row));
      return hasher.root();
    });
    tree.push(built.ms);
    treeRoot = built.value;
    verify.push((await timedAsync(() => verifyRecord({ path }))).ms);
    const walked = await timedAsync(() => recordTree(path));
    if (walked.value.verification.verdict.status !== "verified")
      throw new Error(`the bench record does not verify: ${JSON.stringify(walked.value.verification.verdict)}`);
    checkpoint.push(walked.ms);
    walkRoot = walked.value.root;
  }
  if (!treeRoot.equals(walkRoot)) throw new Error("the tree over the rows and the tree the walk built differ: nothing was measured");

  const per = (ms: number): string => `${((ms * 1000) / rows.length).toFixed(2)} µs/Line`;
  const [h, t, v, c] = [hashing, tree, verify, checkpoint].map(median) as [number, number, number, number];
  console.log(`  SHA-256 of each Line            ${h.toFixed(0).padStart(7)} ms  ${per(h)}`);
  console.log(`  (a) the tree over the Lines     ${t.toFixed(0).padStart(7)} ms  ${per(t)}  ${(t / h).toFixed(2)}x hashing (target < 1.5x)`);
  console.log(`  verifyRecord                    ${v.toFixed(0).padStart(7)} ms  ${per(v)}`);
  console.log(
    `  (b) recordTree (verify + tree)  ${c.toFixed(0).padStart(7)} ms  ${per(c)}  ${(c / v).toFixed(2)}x verify; adds ${(((c - v) * 1000) / rows.length).toFixed(2)} µs/Line`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
