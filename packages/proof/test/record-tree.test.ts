import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { RecordWriter, PolicySetHash, SigningKey } from "@aegis/format";
import { describe, expect, it } from "vitest";
import {
  checkProof,
  defaultOrigin,
  formatTlogProof,
  leafHash,
  parseNote,
  readCheckpointText,
  recordInclusionProof,
  recordTree,
  signCheckpoint,
  verifyWithCheckpoints,
} from "../src/index.js";
import { verifyInclusion } from "../src/merkle.js";

const KEY = SigningKey.generate();
const HASH = PolicySetHash.of("proof-tests");

/** A record of `sessions` (each a number of calls), every Session closed, written by the real writer. */
async function record(sessions: readonly number[]): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), "aegis-proof-")), "r.aarl");
  for (const [s, calls] of sessions.entries()) {
    const writer = await RecordWriter.open(path, { key: KEY });
    for (let c = 0; c < calls; c += 1) {
      await writer.recordUnrun(
        { call_id: `s${s}-c${c}`, tool_id: "t", policy_set_hash: HASH, request: Buffer.from(`${s}/${c}`) },
        { policy: { status: "allowed" }, capability: { status: "denied", reason: "x" }, execution: { status: "success" }, decision_axes: {} },
      );
    }
    await writer.close();
  }
  return path;
}

const rowsOf = (path: string): string[] => readFileSync(path, "utf8").trimEnd().split("\n");

describe("the tree of a record's Lines", () => {
  it("proves every Line of a generated record under its checkpoint, and no other Line at its index", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }), async (sessions) => {
        const path = await record(sessions);
        const rows = rowsOf(path);
        const tree = await recordTree(path);
        expect(tree.verification.verdict.status).toBe("verified");
        expect(tree.size).toBe(rows.length);
        const checkpoint = Buffer.from(signCheckpoint({ origin: "test.example/log", size: tree.size, root: tree.root, extensions: [] }, KEY));
        for (const [index, row] of rows.entries()) {
          const hashes = await recordInclusionProof(path, index, tree.size);
          const proof = formatTlogProof({ extra: Buffer.from(row), index, hashes, checkpoint });
          expect(checkProof(Buffer.from(proof), [KEY.publicKey]).code, `Line ${index + 1}`).toBe("included");
          const other = rows[(index + 1) % rows.length] ?? "";
          if (rows.length > 1) expect(verifyInclusion(leafHash(other), index, tree.size, hashes, tree.root)).toBe(false);
        }
      }),
      { numRuns: 15 },
    );
  });

  it("hashes each Line's canonical form, so an emitter's spacing does not move the root", async () => {
    const path = await record([2]);
    const spaced = rowsOf(path)
      .map((row) => JSON.stringify(JSON.parse(row), null, 1).replaceAll("\n", ""))
      .join("\r\n");
    const copy = `${path}.spaced`;
    writeFileSync(copy, `${spaced}\r\n`);
    const [a, b] = await Promise.all([recordTree(path), recordTree(copy)]);
    expect(b.verification.verdict.status).toBe("verified");
    expect(b.root.equals(a.root)).toBe(true);
  });

  it("stops at the first Line the verifier refuses: the tree holds the Lines before it", async () => {
    const path = await record([3]);
    const rows = rowsOf(path);
    rows[2] = (rows[2] ?? "").replace('"seq":2', '"seq":9');
    writeFileSync(path, `${rows.join("\n")}\n`);
    const tree = await recordTree(path);
    expect(tree.verification.verdict.status).toBe("tampered");
    expect(tree.lines).toBe(2);
    await expect(recordTree(path, { size: 5 })).rejects.toThrow(/has 2 Lines that verify; a tree of 5/);
  });
});

describe("a crashed writer's record held to its last checkpoint", () => {
  it("is Verified up to the checkpoint, its call in flight listed; Lines after it stay unanchored", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "aegis-proof-")), "crashed.aarl");
    const writer = await RecordWriter.open(path, { key: KEY });
    await writer.beginCall({ call_id: "in-flight", tool_id: "t", policy_set_hash: HASH, request: Buffer.from("x") });
    // The process dies here: no outcome, no close. The checkpoint was issued before it did.
    const tree = await recordTree(path);
    expect(tree.verification.verdict).toMatchObject({ status: "indeterminate", reason: { code: "unanchored_tail", in_flight: ["in-flight"] } });
    const note = Buffer.from(signCheckpoint({ origin: defaultOrigin(tree.firstLineHash), size: tree.size, root: tree.root, extensions: [] }, KEY));
    const given = [{ label: "last.checkpoint", bytes: note, stated: readCheckpointText(parseNote(note).text) }];
    const held = await verifyWithCheckpoints(path, given, { trust: [KEY.publicKeyHex] });
    expect(held.verification.verdict).toEqual({ status: "verified" });
    expect(held.verification.trust).toBe("pinned");
    expect(held.verification.anchored).toEqual({ checkpoint: "last.checkpoint", size: 2, in_flight: ["in-flight"] });

    await writer.beginCall({ call_id: "after", tool_id: "t", policy_set_hash: HASH, request: Buffer.from("y") });
    const later = await verifyWithCheckpoints(path, given, { trust: [KEY.publicKeyHex] });
    expect(later.verification.verdict).toMatchObject({ status: "indeterminate", reason: { code: "unanchored_tail" } });
    expect(later.findings.map((f) => f.code)).toEqual(["matches"]);
    await writer.close();
  });
});
