import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { verifyChainFile } from "../src/index.js";
import { buildChainVectors, expectedFor, type ChainVector } from "./support/chain-vectors.js";
import { vectorPath } from "./support/vectors.js";

/**
 * `vectors/chains/`: the committed files must be exactly what the generator builds, every
 * answer in `expected.json` must be what the verifier says, and the verdict, reason and
 * position of each must be the one stated here by hand, independently of both.
 * `AEGIS_WRITE_VECTORS=1` rewrites the files.
 */
const BY_HAND: Record<string, [string, string | null, Record<string, unknown>?]> = {
  verified_unpinned: ["verified", null],
  verified_pinned: ["verified", null],
  verified_two_sessions: ["verified", null],
  verified_rotated_pinned: ["verified", null],
  verified_unknown_member: ["verified", null],
  chain_broken: ["tampered", "chain_broken", { at: { session_index: 0, seq: 3 } }],
  seq_out_of_order: ["tampered", "seq_out_of_order", { session_index: 0, expected: 4, found: 2 }],
  bad_signature_unsigned: ["tampered", "bad_signature", { at: { session_index: 0, seq: 2 }, source: { code: "unsigned" } }],
  bad_signature_altered: ["tampered", "bad_signature", { at: { session_index: 0, seq: 2 }, source: { code: "bad_signature" } }],
  bad_signature_key_mismatch: ["tampered", "bad_signature", { at: { session_index: 0, seq: 2 }, source: { code: "key_mismatch" } }],
  session_boundary_broken: ["tampered", "session_boundary_broken", { session_index: 1 }],
  malformed_line_not_json: ["tampered", "malformed_line", { line: 3 }],
  malformed_line_float: ["tampered", "malformed_line", { line: 3 }],
  untrusted_key: ["tampered", "untrusted_key", { at: { session_index: 0, seq: 0 } }],
  untrusted_key_empty_store: ["tampered", "untrusted_key", { at: { session_index: 0, seq: 0 } }],
  duplicate_decision: ["tampered", "duplicate_decision", { approval_id: "apr-1" }],
  unknown_line_type: ["indeterminate", "unknown_line_type", { at: { session_index: 0, seq: 3 }, line_type: "attestation" }],
  reserved_checkpoint: ["indeterminate", "reserved_checkpoint", { at: { session_index: 0, seq: 3 } }],
  torn_final_line: ["indeterminate", "torn_final_line", { line: 8 }],
  unanchored_tail: ["indeterminate", "unanchored_tail", { session_index: 0, in_flight: ["call-1"] }],
  missing_line: ["indeterminate", "missing_line", { session_index: 0, expected: 2, found: 3 }],
  empty_chain: ["indeterminate", "empty_chain"],
};

let vectors: ChainVector[];
beforeAll(async () => {
  vectors = await buildChainVectors();
  if (process.env["AEGIS_WRITE_VECTORS"] === "1") {
    for (const v of vectors) writeFileSync(vectorPath(`chains/${v.name}.aarl`), v.bytes);
    writeFileSync(vectorPath("chains/expected.json"), `${JSON.stringify(vectors.map(expectedFor), null, 2)}\n`);
  }
});

describe("vectors/chains", () => {
  it("holds one file per vector, each exactly as the generator builds it", () => {
    expect(vectors.map((v) => v.name).sort()).toEqual(Object.keys(BY_HAND).sort());
    const committed = readdirSync(vectorPath("chains")).filter((f) => f.endsWith(".aarl"));
    expect(committed.sort()).toEqual(vectors.map((v) => `${v.name}.aarl`).sort());
    for (const v of vectors) expect(readFileSync(vectorPath(`chains/${v.name}.aarl`), "utf8"), v.name).toBe(v.bytes);
  });

  it("every verdict reason of SPEC §8.3 but line_too_long has a vector", () => {
    const codes = new Set(Object.values(BY_HAND).map(([, code]) => code));
    for (const code of ["chain_broken", "seq_out_of_order", "bad_signature", "session_boundary_broken", "malformed_line", "untrusted_key", "duplicate_decision", "unknown_line_type", "reserved_checkpoint", "torn_final_line", "unanchored_tail", "missing_line", "empty_chain"]) {
      expect(codes.has(code), code).toBe(true);
    }
  });

  it("expected.json is the verifier's answer on each file, and agrees with the hand-written table", async () => {
    expect(existsSync(vectorPath("chains/expected.json"))).toBe(true);
    const expected = JSON.parse(readFileSync(vectorPath("chains/expected.json"), "utf8")) as Record<string, unknown>[];
    expect(expected).toEqual(vectors.map(expectedFor));
    for (const entry of expected) {
      const name = String(entry["file"]).replace(/\.aarl$/, "");
      const [verdict, code, fields] = BY_HAND[name] ?? [];
      expect(entry["verdict"], name).toBe(verdict);
      if (code !== null) expect(entry["reason"], name).toMatchObject({ code, ...fields });
      const trust = entry["trust"] as string[] | null;
      const fromFile = await verifyChainFile(vectorPath(`chains/${name}.aarl`), trust === null ? {} : { trust });
      expect(fromFile.verdict.status, name).toBe(verdict);
    }
  });
});
