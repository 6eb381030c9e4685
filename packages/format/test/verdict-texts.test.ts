import { describe, expect, it } from "vitest";
import { KeyId, LineHash, PrevHash, describeVerdict, type IndeterminateReason, type TamperedReason, type Verification } from "../src/index.js";
import { describeIndeterminate, describeTampered } from "../src/verify/verdict.js";

/**
 * Every reason's text, written here from the tables of SPEC §8.3 and §19.4 and the verdict
 * lines of §8.6: what `aegis verify` prints after `Tampered: ` or `Indeterminate: `, the
 * reference's word for word, so a script that reads one implementation reads the other.
 */
const E = LineHash.of("expected");
const F = PrevHash.after(LineHash.of("found"));
const K = KeyId.of(new Uint8Array(32));
const at = { session_index: 2, seq: 5 };

describe("[M8.5] SPEC §8.3: the Tampered texts", () => {
  const cases: [TamperedReason, string][] = [
    [{ code: "chain_broken", at, expected: E, found: F }, `line at session 2 seq 5 chains to ${F}, but the line before it hashes to ${E}`],
    [{ code: "seq_out_of_order", session_index: 1, expected: 4, found: 2 }, "session 1 expected seq 4, found 2"],
    [{ code: "bad_signature", at, source: { code: "unsigned" } }, "line at session 2 seq 5: line carries no signature"],
    [
      { code: "bad_signature", at, source: { code: "key_mismatch", expected: K, found: KeyId.of(new Uint8Array(32).fill(1)) } },
      `line at session 2 seq 5: line was signed under key ${KeyId.of(new Uint8Array(32).fill(1))}, not ${K}`,
    ],
    [{ code: "bad_signature", at, source: { code: "malformed_public_key" } }, "line at session 2 seq 5: not a valid ed25519 public key"],
    [{ code: "bad_signature", at, source: { code: "bad_signature" } }, "line at session 2 seq 5: signature does not match this line"],
    [
      { code: "session_boundary_broken", session_index: 3, expected: E, found: "ab".repeat(32) },
      `session 3 back-references ${"ab".repeat(32)}, but the previous session ends at ${E}`,
    ],
    [{ code: "session_boundary_broken", session_index: 3, expected: E }, `session 3 carries no prev_session_tail, but the previous session ends at ${E}`],
    [{ code: "malformed_line", line: 9, detail: "no seq" }, "line 9: no seq"],
    [
      { code: "untrusted_key", at, key_id: K },
      `session opened at session 2 seq 5 publishes a key with fingerprint ${K}, which is not in the supplied trust store (--key takes the 64-hex public key, not this fingerprint)`,
    ],
    [{ code: "duplicate_decision", at, approval_id: "apr-7" }, "line at session 2 seq 5 decides approval apr-7 a second time"],
  ];
  it.each(cases)("%o", (reason, text) => {
    expect(describeTampered(reason)).toBe(text);
  });
});

describe("SPEC §19.4: the checkpoint reasons (aegis-ts)", () => {
  const cases: [TamperedReason, string][] = [
    [
      { code: "truncated", checkpoint: "cp.txt", origin: "example.org/log", size: 12, lines: 9 },
      "checkpoint cp.txt of example.org/log vouches for 12 lines, but only 9 verify; the record was cut short",
    ],
    [
      { code: "checkpoint_mismatch", checkpoint: "cp.txt", origin: "example.org/log", size: 12, expected: "AAA=", found: "BBB=" },
      "the first 12 lines hash to root BBB=, not the root AAA= that checkpoint cp.txt of example.org/log states",
    ],
    [
      { code: "checkpoint_unsigned", checkpoint: "cp.txt", origin: "example.org/log", size: 12 },
      "checkpoint cp.txt of example.org/log is not signed by the key of the session holding line 12",
    ],
    [
      { code: "inconsistent_checkpoints", origin: "example.org/log", size: 12, first: "a.txt", second: "b.txt" },
      "checkpoints a.txt and b.txt of example.org/log state different roots for 12 lines; the record forked",
    ],
  ];
  it.each(cases)("%o", (reason, text) => {
    expect(describeTampered(reason)).toBe(text);
  });
});

describe("SPEC §8.3: the Indeterminate texts", () => {
  const cases: [IndeterminateReason, string][] = [
    [{ code: "unknown_line_type", at, line_type: "attestation" }, "unknown line type `attestation` at session 2 seq 5, newer emitter"],
    [{ code: "reserved_checkpoint", at }, "reserved checkpoint line at session 2 seq 5, not defined by v0"],
    [{ code: "torn_final_line", line: 8 }, "final line 8 does not parse; torn write"],
    [
      { code: "unanchored_tail", session_index: 1, in_flight: ["a", "b", "a"] },
      "session 1 has no close record and nothing anchors beyond it; 3 call(s) in flight",
    ],
    [{ code: "unanchored_tail", session_index: 0, in_flight: [] }, "session 0 has no close record and nothing anchors beyond it; 0 call(s) in flight"],
    [{ code: "missing_line", session_index: 1, expected: 2, found: 5 }, "session 1 skips seq 2..5 with the chain intact; a write did not land"],
    [{ code: "empty_chain" }, "no lines to verify"],
    [{ code: "line_too_long", line: 3, limit: 1048576 }, "line 3 is longer than 1048576 bytes; not read"],
  ];
  it.each(cases)("%o", (reason, text) => {
    expect(describeIndeterminate(reason)).toBe(text);
  });
});

describe("SPEC §8.6: the verdict line", () => {
  const base: Verification = {
    verdict: { status: "verified" },
    key_ids: [K],
    trust: "pinned",
    lines: 3,
    sessions: 1,
    unfinished_calls: { count: 0, calls: [] },
  };
  const other = KeyId.of(new Uint8Array(32).fill(2));

  it("Verified: pinned to its one key, pinned when it saw several, or unpinned", () => {
    expect(describeVerdict(base)).toBe(`Verified (pinned to ${K})`);
    expect(describeVerdict({ ...base, key_ids: [K, other] })).toBe("Verified (pinned)");
    expect(describeVerdict({ ...base, key_ids: [] })).toBe("Verified (pinned)");
    expect(describeVerdict({ ...base, trust: "unpinned" })).toBe("Verified (unpinned)");
    expect(describeVerdict({ ...base, trust: "unpinned", key_ids: [K, other] })).toBe("Verified (unpinned)");
  });

  it("Tampered and Indeterminate: the reason's text after the status", () => {
    expect(describeVerdict({ ...base, verdict: { status: "tampered", reason: { code: "malformed_line", line: 2, detail: "no seq" } } })).toBe(
      "Tampered: line 2: no seq",
    );
    expect(describeVerdict({ ...base, verdict: { status: "indeterminate", reason: { code: "empty_chain" } } })).toBe("Indeterminate: no lines to verify");
  });
});

describe("a reason this build does not know gets no other reason's text", () => {
  // A verdict read from elsewhere (a newer build's --json, a hand-edited report) can carry a
  // code outside this build's union: describing it as the last case of a table would print
  // a false reason, so the describers refuse it.
  const unknown = { code: "a_newer_reason", at: { session_index: 0, seq: 1 }, line: 1, limit: 1, origin: "o", size: 1, first: "a", second: "b" };

  it("neither a Tampered nor an Indeterminate reason, nor a signature fault, nor a status", () => {
    expect(() => describeTampered(unknown as unknown as TamperedReason)).toThrow("unreachable");
    expect(() => describeIndeterminate(unknown as unknown as IndeterminateReason)).toThrow("unreachable");
    expect(() => describeTampered({ code: "bad_signature", at, source: { code: "a_newer_fault" } } as unknown as TamperedReason)).toThrow("unreachable");
    const verification = {
      verdict: { status: "withdrawn", reason: { code: "empty_chain" } },
      key_ids: [],
      trust: "unpinned",
      lines: 1,
      sessions: 1,
      unfinished_calls: { count: 0, calls: [] },
    };
    expect(() => describeVerdict(verification as unknown as Verification)).toThrow("unreachable");
  });
});
