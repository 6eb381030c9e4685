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
type Hand = readonly [verdict: string, code: string | null, fields: Record<string, unknown>, coverage: readonly [number, number] | null];
const BY_HAND: Record<string, Hand> = {
  verified_unpinned: ["verified", null, {}, [0, 7]],
  verified_pinned: ["verified", null, {}, [0, 7]],
  verified_two_sessions: ["verified", null, {}, [1, 7]],
  verified_rotated_pinned: ["verified", null, {}, [1, 7]],
  verified_unknown_member: ["verified", null, {}, [0, 7]],
  chain_broken: ["tampered", "chain_broken", { at: { session_index: 0, seq: 3 } }, [0, 2]],
  seq_out_of_order: ["tampered", "seq_out_of_order", { session_index: 0, expected: 4, found: 2 }, [0, 2]],
  bad_signature_unsigned: ["tampered", "bad_signature", { at: { session_index: 0, seq: 2 }, source: { code: "unsigned" } }, [0, 0]],
  bad_signature_altered: ["tampered", "bad_signature", { at: { session_index: 0, seq: 2 }, source: { code: "bad_signature" } }, [0, 0]],
  bad_signature_key_mismatch: ["tampered", "bad_signature", { at: { session_index: 0, seq: 2 }, source: { code: "key_mismatch" } }, [0, 0]],
  session_boundary_broken: ["tampered", "session_boundary_broken", { session_index: 1 }, [0, 6]],
  malformed_line_not_json: ["tampered", "malformed_line", { line: 3 }, [0, 0]],
  malformed_line_float: ["tampered", "malformed_line", { line: 3 }, [0, 0]],
  untrusted_key: ["tampered", "untrusted_key", { at: { session_index: 0, seq: 0 } }, null],
  untrusted_key_empty_store: ["tampered", "untrusted_key", { at: { session_index: 0, seq: 0 } }, null],
  // The second decision's signature verifies before it is found to repeat the first.
  duplicate_decision: ["tampered", "duplicate_decision", { at: { session_index: 0, seq: 7 }, approval_id: "apr-1" }, [0, 7]],
  unknown_line_type: ["indeterminate", "unknown_line_type", { at: { session_index: 0, seq: 3 }, line_type: "attestation" }, [0, 8]],
  reserved_checkpoint: ["indeterminate", "reserved_checkpoint", { at: { session_index: 0, seq: 3 } }, [0, 8]],
  torn_final_line: ["indeterminate", "torn_final_line", { line: 8 }, [0, 6]],
  unanchored_tail: ["indeterminate", "unanchored_tail", { session_index: 0, in_flight: ["call-1"] }, [0, 2]],
  missing_line: ["indeterminate", "missing_line", { session_index: 0, expected: 2, found: 3 }, [0, 7]],
  empty_chain: ["indeterminate", "empty_chain", {}, null],
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
      const [verdict, code, fields, coverage] = BY_HAND[name] ?? [];
      expect(entry["verdict"], name).toBe(verdict);
      if (code !== null) expect(entry["reason"], name).toMatchObject({ code, ...fields });
      expect(entry["coverage"], `${name} coverage`).toEqual(coverage === null || coverage === undefined ? null : { session_index: coverage[0], seq: coverage[1] });
      const trust = entry["trust"] as string[] | null;
      const fromFile = await verifyChainFile(vectorPath(`chains/${name}.aarl`), trust === null ? {} : { trust });
      expect(fromFile.verdict.status, name).toBe(verdict);
    }
  });
});
