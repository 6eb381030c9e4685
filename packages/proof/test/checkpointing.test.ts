import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolicySetHash, SigningKey } from "@aegis/format";
import { describe, expect, it } from "vitest";
import { openCheckpointedWriter, parseNote, readCheckpointText, verifyWithCheckpoints, type CheckpointedWriter } from "../src/index.js";

const KEY = SigningKey.generate();
const HASH = PolicySetHash.of("checkpointing-tests");
const temp = (): string => join(mkdtempSync(join(tmpdir(), "aegis-checkpointing-")), "record.aarl");

async function calls(at: CheckpointedWriter, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 1) {
    await at.writer.recordUnrun(
      { call_id: `c${i}`, tool_id: "t", policy_set_hash: HASH, request: Buffer.from(String(i)) },
      { policy: { status: "allowed" }, capability: { status: "denied", reason: "x" }, execution: { status: "success" }, decision_axes: {} },
    );
  }
}

async function heldToSidecar(path: string, sidecar: string) {
  const bytes = readFileSync(sidecar);
  return verifyWithCheckpoints(path, [{ label: sidecar, bytes, stated: readCheckpointText(parseNote(bytes).text) }], { trust: [KEY.publicKeyHex] });
}

const lineCount = (path: string): number => readFileSync(path, "utf8").trimEnd().split("\n").length;

describe("a writer that checkpoints its own record (SPEC §19.5)", () => {
  it("keeps a checkpoint of every durable Line in the sidecar, the last one covering the close", async () => {
    const path = temp();
    const seen: number[] = [];
    const at = await openCheckpointedWriter(path, { key: KEY }, { everyLines: 4, everyMs: 0, onCheckpoint: (_, size) => seen.push(size) });
    await calls(at, 0, 5);
    await at.checkpoint();
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)).toBe(11);
    const final = await at.close();
    expect(final).toBe(readFileSync(at.sidecar, "utf8"));
    expect(readCheckpointText(parseNote(Buffer.from(final ?? "")).text).size).toBe(lineCount(path));
    const held = await heldToSidecar(path, at.sidecar);
    expect(held.verification.verdict).toEqual({ status: "verified" });
    expect(held.findings.map((f) => f.code)).toEqual(["matches"]);
  });

  it("leaves a crashed record's tail anchored by the last checkpoint", async () => {
    const path = temp();
    const at = await openCheckpointedWriter(path, { key: KEY }, { everyLines: 1, everyMs: 0 });
    await calls(at, 0, 2);
    await at.writer.beginCall({ call_id: "in-flight", tool_id: "t", policy_set_hash: HASH, request: Buffer.from("x") });
    // Every durable Line is checkpointed: the process dies here, with a call in flight.
    await at.checkpoint();
    const held = await heldToSidecar(path, at.sidecar);
    expect(held.verification.verdict).toEqual({ status: "verified" });
    expect(held.verification.anchored).toMatchObject({ size: lineCount(path), in_flight: ["in-flight"] });
    await at.close();
  });

  it("checkpoints on time when too few Lines come for a count", async () => {
    const path = temp();
    const at = await openCheckpointedWriter(path, { key: KEY }, { everyLines: 1000, everyMs: 10 });
    await calls(at, 0, 1);
    const deadline = Date.now() + 20_000;
    while (!existsSync(at.sidecar) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(existsSync(at.sidecar)).toBe(true);
    await at.close();
  });

  it("goes on from a record it reopens: the new checkpoint covers the old Sessions too", async () => {
    const path = temp();
    const first = await openCheckpointedWriter(path, { key: KEY }, { everyMs: 0 });
    await calls(first, 0, 3);
    await first.close();
    const second = await openCheckpointedWriter(path, { key: KEY }, { everyMs: 0 });
    await calls(second, 3, 2);
    await second.close();
    const held = await heldToSidecar(path, second.sidecar);
    expect(held.findings.map((f) => [f.code, f.size])).toEqual([["matches", lineCount(path)]]);
  });
});
