import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { manifestEntries } from "./support/manifest.js";
import { vectorPath } from "./support/vectors.js";
import { verifyChainFile } from "../src/verify/verify-record.js";
import { exitCodeOfVerdict } from "../src/verify/exit-code.js";

/**
 * `vectors/chains/`: every answer in the manifest must be what the verifier says on the
 * committed file, and the verdict, reason and position of the cases below must be the
 * ones stated here by hand, independently of both. (That the files are exactly what the
 * generator builds is checked in packages/cli/test/vectors.test.ts.)
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

const entries = manifestEntries("chain");
const nameOf = (id: string): string => id.replace(/^chains\//, "");

describe("vectors/chains", () => {
  it("holds a vector for every case stated by hand, and a file for every vector", () => {
    const names = new Set(entries.map((e) => nameOf(e.id)));
    for (const name of Object.keys(BY_HAND)) expect(names.has(name), name).toBe(true);
    const committed = readdirSync(vectorPath("chains")).filter((f) => f.endsWith(".aarl"));
    expect(committed.sort()).toEqual(entries.map((e) => String(e.input["record"]).replace(/^chains\//, "")).sort());
  });

  it("every verdict reason of SPEC §8.3 but line_too_long has a vector", () => {
    const codes = new Set(entries.map((e) => (e.expected["reason"] as { code?: string } | null)?.code));
    for (const code of [
      "chain_broken",
      "seq_out_of_order",
      "bad_signature",
      "session_boundary_broken",
      "malformed_line",
      "untrusted_key",
      "duplicate_decision",
      "unknown_line_type",
      "reserved_checkpoint",
      "torn_final_line",
      "unanchored_tail",
      "missing_line",
      "empty_chain",
    ]) {
      expect(codes.has(code), code).toBe(true);
    }
  });

  it.each(entries)("$id: the verifier's answer on the file is the manifest's", async (entry) => {
    const trust = entry.input["trust"] as string[] | null;
    const result = await verifyChainFile(vectorPath(String(entry.input["record"])), trust === null ? {} : { trust });
    expect(result.verdict.status).toBe(entry.expected["verdict"]);
    expect(result.verdict.status === "verified" ? null : JSON.parse(JSON.stringify(result.verdict.reason))).toEqual(entry.expected["reason"]);
    expect(result.coverage ?? null).toEqual(entry.expected["coverage"]);
    expect(result.head ?? null).toBe(entry.expected["head"]);
    expect(result.unfinished_calls).toEqual(entry.expected["unfinished_calls"]);
    expect(exitCodeOfVerdict(result.verdict)).toBe(entry.expected["exit_code"]);
  });

  it("the manifest agrees with the hand-written table", () => {
    for (const [name, [verdict, code, fields, coverage]] of Object.entries(BY_HAND)) {
      const entry = entries.find((e) => nameOf(e.id) === name);
      expect(entry?.expected["verdict"], name).toBe(verdict);
      if (code !== null) expect(entry?.expected["reason"], name).toMatchObject({ code, ...fields });
      expect(entry?.expected["coverage"], `${name} coverage`).toEqual(coverage === null ? null : { session_index: coverage[0], seq: coverage[1] });
    }
  });
});
