import { DEV_PUBLIC, ROTATED_PUBLIC, type ChainCase, type ChainKit } from "./chain-kit.js";

/**
 * SPEC §8.4, §8.2-§8.3: the chain vectors past tampering: keys the trust set does not hold,
 * records whose verdict is capped (indeterminate), and the precedence between them. They
 * follow chains.ts's own cases, in this order, in the manifest.
 */
export function trustAndCapCases(kit: ChainKit): readonly ChainCase[] {
  const {
    base,
    lines,
    rows,
    seal,
    parsed,
    renumber,
    insertAt,
    decision,
    close,
    twoSessions,
    decidedAgainLater,
    rotatedSecond,
    unknownLine,
    checkpoint,
    chainCase: c,
  } = kit;
  return [
    c("untrusted_key", "negative", ["8.4"], "The Session is signed by a key outside the trust set.", base, [ROTATED_PUBLIC]),
    c("untrusted_key_empty_store", "negative", ["8.4"], "An empty trust set pins to nothing.", base, []),
    c("untrusted_key_rotated", "negative", ["7", "8.4"], "Rotation to a key the trust set does not hold.", seal(twoSessions, { signWith: rotatedSecond }), [
      DEV_PUBLIC,
    ]),
    c("untrusted_key_first_session", "negative", ["7", "8.4"], "Only the second Session's key is trusted.", seal(twoSessions, { signWith: rotatedSecond }), [
      ROTATED_PUBLIC,
    ]),
    c(
      "duplicate_decision",
      "negative",
      ["5.3", "8.3", "15.7"],
      "A second decision for the same approval_id, validly signed: why approval ids must never repeat.",
      seal(renumber([...lines.slice(0, -1), { ...decision, verdict: { verdict: "approved", scope: { tool_id: "net.post" } } }, close])),
    ),
    c(
      "duplicate_decision_across_sessions",
      "negative",
      ["8.1", "8.2", "8.3"],
      "Two Sessions; the second decides apr-1, denied in the first, as approved: decided spans the file, not a Session, so the second decision is Tampered.",
      seal(decidedAgainLater),
    ),
    c(
      "duplicate_decision_same_verdict",
      "negative",
      ["5.3", "8.3"],
      "The decision repeated word for word (a replay).",
      seal(renumber([...lines.slice(0, -1), decision, close])),
    ),
    // Indeterminate.
    c("unknown_line_type", "negative", ["5.2", "8.3"], "An unsigned line of type 'attestation' after line 3.", seal(insertAt(3, unknownLine))),
    c("reserved_checkpoint", "negative", ["5.3", "8.3"], "A signed checkpoint after line 3.", seal(insertAt(3, checkpoint))),
    c("torn_final_line", "negative", ["1.1", "8.3"], "The close line cut off 20 bytes before its end.", base.slice(0, base.length - 21)),
    c(
      "torn_final_line_one_byte",
      "negative",
      ["1.1", "8.3"],
      "Only the first byte of the close line landed.",
      base.slice(0, base.length - (rows.at(-2)?.length ?? 0)),
    ),
    c("unanchored_tail", "negative", ["8.7", "8.3"], "No close; the last call's intent has no outcome.", seal(lines.slice(0, 4))),
    c("unanchored_tail_quiet", "negative", ["8.7", "8.3"], "No close; every call has its outcome.", seal(lines.slice(0, 5))),
    c("missing_line", "negative", ["8.3"], "Line 3 never landed; the chain is intact around the gap.", seal(lines.filter((_, i) => i !== 2))),
    c(
      "line_too_long",
      "negative",
      ["13.1", "8.3"],
      "Line 4 is a row of 1 MiB + 1 bytes: over the row bound, the walk stops there.",
      seal(lines.slice(0, 3)) + `{"x":"${"a".repeat((1 << 20) - 7)}"}\n` + seal(lines).split("\n").slice(3).join("\n"),
    ),
    c("empty_chain", "negative", ["8.3"], "No lines at all.", ""),
    c("empty_chain_blank_rows", "negative", ["1.1", "8.3"], "Only blank rows.", "\n \n\t\n"),
    // Precedence (SPEC §8.2): the first Tampered ends the walk; the first cap wins; a later Tampered overrides a cap.
    c(
      "precedence_cap_then_tampered",
      "negative",
      ["8.2"],
      "An unknown line type, then a broken chain: Tampered overrides the cap.",
      seal(
        parsed(seal(insertAt(3, unknownLine))).map((l, i) => (i === 6 ? { ...l, prev_hash: "f".repeat(64) } : l)),
        { chain: false },
      ),
    ),
    c(
      "precedence_first_cap_wins",
      "negative",
      ["8.2"],
      "An unknown line type, then a checkpoint: the first cap is reported.",
      seal(renumber([...lines.slice(0, 3), unknownLine, ...lines.slice(3, 5), checkpoint, ...lines.slice(5)])),
    ),
    c(
      "precedence_first_tampered_wins",
      "negative",
      ["8.2"],
      "A stripped signature on line 3, then a broken chain on line 6: the first is reported.",
      seal(
        parsed(seal(lines)).map((l, i) => (i === 5 ? { ...l, prev_hash: "f".repeat(64) } : l)),
        { chain: false, unsigned: [2] },
      ),
    ),
    c(
      "precedence_tampered_then_torn",
      "negative",
      ["8.2"],
      "A stripped signature, and a torn final line: Tampered.",
      seal(lines, { unsigned: [2] }).slice(0, -21),
    ),
    c(
      "precedence_cap_then_torn",
      "negative",
      ["8.2"],
      "An unknown line type, then a torn final line: the first cap wins.",
      seal(insertAt(3, unknownLine)).slice(0, -21),
    ),
  ];
}
