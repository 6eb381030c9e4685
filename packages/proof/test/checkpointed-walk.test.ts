import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as format from "@aegis/format";
import { PolicySetHash, SigningKey } from "@aegis/format";
import { describe, expect, it, vi } from "vitest";
import { openCheckpointedWriter, parseNote, readCheckpointText, verifyWithCheckpoints } from "../src/index.js";

// The verifier itself, watched: what verifyWithCheckpoints asks of it is what this file tests.
vi.mock("@aegis/format", async (importOriginal) => {
  const real = await importOriginal<typeof import("@aegis/format")>();
  return { ...real, verifyRecord: vi.fn(real.verifyRecord) };
});

const KEY = SigningKey.generate();
const HASH = PolicySetHash.of("checkpointed-walk-tests");

async function checkpointedRecord(): Promise<{ readonly path: string; readonly sidecar: string }> {
  const path = join(mkdtempSync(join(tmpdir(), "aegis-checkpointed-walk-")), "record.aarl");
  const at = await openCheckpointedWriter(path, { key: KEY }, { everyLines: 4, everyMs: 0 });
  for (let i = 0; i < 3; i += 1) {
    await at.writer.recordUnrun(
      { call_id: `c${i}`, tool_id: "t", policy_set_hash: HASH, request: Buffer.from(String(i)) },
      { policy: { status: "allowed" }, capability: { status: "denied", reason: "x" }, execution: { status: "success" }, decision_axes: {} },
    );
  }
  await at.close();
  return { path, sidecar: at.sidecar };
}

describe("verifyWithCheckpoints and the walk it asks for", () => {
  it("without checkpoints asks the verifier for no Line, so the split walk's threads read the Lines (ADR 0027), and answers as the verifier does", async () => {
    const { path } = await checkpointedRecord();
    const verify = vi.mocked(format.verifyRecord);
    verify.mockClear();
    const held = await verifyWithCheckpoints(path, [], { trust: [KEY.publicKeyHex], threads: 2 });
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0]?.[1]?.onLine).toBeUndefined();
    expect(held).toEqual({ verification: await format.verifyRecord({ path }, { trust: [KEY.publicKeyHex] }), findings: [] });
    expect(held.verification.verdict).toEqual({ status: "verified" });
  });

  it("with a checkpoint sees every Line, to build the tree it is held to (SPEC §19.4)", async () => {
    const { path, sidecar } = await checkpointedRecord();
    const bytes = readFileSync(sidecar);
    const verify = vi.mocked(format.verifyRecord);
    verify.mockClear();
    const held = await verifyWithCheckpoints(path, [{ label: sidecar, bytes, stated: readCheckpointText(parseNote(bytes).text) }], {
      trust: [KEY.publicKeyHex],
    });
    expect(verify.mock.calls[0]?.[1]?.onLine).toBeTypeOf("function");
    expect(held.findings.map((f) => f.code)).toEqual(["matches"]);
  });
});
