import { unreachable } from "../unreachable.js";
import { match } from "ts-pattern";
import type { KeyId, LineHash, PrevHash } from "../wire/digest.js";

/**
 * The verdict model (SPEC §8): three states, each with a typed reason and a stable `code`.
 * The human text of each reason is the reference's, word for word, so outputs of the two
 * implementations can be compared line by line.
 */

/** A Line's address: `seq` restarts per Session, so a position is a pair (SPEC §7). */
export interface Position {
  readonly session_index: number;
  readonly seq: number;
}

export function describePosition(at: Position): string {
  return `session ${at.session_index} seq ${at.seq}`;
}

/** Why a signed Line does not authenticate (SPEC §8.4). */
export type SignatureFault =
  | { readonly code: "unsigned" }
  | { readonly code: "key_mismatch"; readonly expected: KeyId; readonly found: KeyId }
  | { readonly code: "malformed_public_key" }
  | { readonly code: "bad_signature" };

export type TamperedReason =
  | { readonly code: "chain_broken"; readonly at: Position; readonly expected: LineHash; readonly found: PrevHash }
  | { readonly code: "seq_out_of_order"; readonly session_index: number; readonly expected: number; readonly found: number }
  | { readonly code: "bad_signature"; readonly at: Position; readonly source: SignatureFault }
  | {
      readonly code: "session_boundary_broken";
      readonly session_index: number;
      readonly expected: LineHash;
      /** The `prev_session_tail` the `open` Line carries; absent when it carries none. */
      readonly found?: string;
    }
  | { readonly code: "malformed_line"; readonly line: number; readonly detail: string }
  | { readonly code: "untrusted_key"; readonly at: Position; readonly key_id: KeyId }
  | { readonly code: "duplicate_decision"; readonly at: Position; readonly approval_id: string };

export type IndeterminateReason =
  | { readonly code: "unknown_line_type"; readonly at: Position; readonly line_type: string }
  | { readonly code: "reserved_checkpoint"; readonly at: Position }
  | { readonly code: "torn_final_line"; readonly line: number }
  | { readonly code: "unanchored_tail"; readonly session_index: number; readonly in_flight: readonly string[] }
  | { readonly code: "missing_line"; readonly session_index: number; readonly expected: number; readonly found: number }
  | { readonly code: "empty_chain" }
  /** aegis-ts (SPEC §13.1): a line longer than the verifier's bound; the walk stops there. */
  | { readonly code: "line_too_long"; readonly line: number; readonly limit: number };

export type Verdict =
  | { readonly status: "verified" }
  | { readonly status: "indeterminate"; readonly reason: IndeterminateReason }
  | { readonly status: "tampered"; readonly reason: TamperedReason };

export type ReasonCode = TamperedReason["code"] | IndeterminateReason["code"];

/** Whether the verdict's keys were supplied out of band (SPEC §8.4). */
export type TrustLabel = "pinned" | "unpinned";

export interface Verification {
  readonly verdict: Verdict;
  /** The highest position a valid signature covers; absent when none does. */
  readonly coverage?: Position;
  /** Every key an `open` Line published, first-seen order, without repeats. */
  readonly key_ids: readonly KeyId[];
  /** `pinned` only when a trust slice was supplied and the verdict is `verified`. */
  readonly trust: TrustLabel;
  /** Non-blank rows read (the walk stops at the first Tampered row). */
  readonly lines: number;
  /** Sessions begun by an accepted `open` Line. */
  readonly sessions: number;
  /** The line_hash of the last Line the walk accepted; absent when it accepted none. */
  readonly head?: LineHash;
}

export function describeSignatureFault(fault: SignatureFault): string {
  return match(fault)
    .with({ code: "unsigned" }, () => "line carries no signature")
    .with({ code: "key_mismatch" }, (f) => `line was signed under key ${f.found}, not ${f.expected}`)
    .with({ code: "malformed_public_key" }, () => "not a valid ed25519 public key")
    .with({ code: "bad_signature" }, () => "signature does not match this line")
    .exhaustive(unreachable);
}

export function describeTampered(reason: TamperedReason): string {
  return match(reason)
    .with({ code: "chain_broken" }, (r) => `line at ${describePosition(r.at)} chains to ${r.found}, but the line before it hashes to ${r.expected}`)
    .with({ code: "seq_out_of_order" }, (r) => `session ${r.session_index} expected seq ${r.expected}, found ${r.found}`)
    .with({ code: "bad_signature" }, (r) => `line at ${describePosition(r.at)}: ${describeSignatureFault(r.source)}`)
    .with({ code: "session_boundary_broken" }, (r) =>
      r.found === undefined
        ? `session ${r.session_index} carries no prev_session_tail, but the previous session ends at ${r.expected}`
        : `session ${r.session_index} back-references ${r.found}, but the previous session ends at ${r.expected}`,
    )
    .with({ code: "malformed_line" }, (r) => `line ${r.line}: ${r.detail}`)
    .with(
      { code: "untrusted_key" },
      (r) =>
        `session opened at ${describePosition(r.at)} publishes a key with fingerprint ${r.key_id}, which is not in the supplied trust store (--key takes the 64-hex public key, not this fingerprint)`,
    )
    .with({ code: "duplicate_decision" }, (r) => `line at ${describePosition(r.at)} decides approval ${r.approval_id} a second time`)
    .exhaustive(unreachable);
}

export function describeIndeterminate(reason: IndeterminateReason): string {
  return match(reason)
    .with({ code: "unknown_line_type" }, (r) => `unknown line type \`${r.line_type}\` at ${describePosition(r.at)}, newer emitter`)
    .with({ code: "reserved_checkpoint" }, (r) => `reserved checkpoint line at ${describePosition(r.at)}, not defined by v0`)
    .with({ code: "torn_final_line" }, (r) => `final line ${r.line} does not parse; torn write`)
    .with(
      { code: "unanchored_tail" },
      (r) => `session ${r.session_index} has no close record and nothing anchors beyond it; ${r.in_flight.length} call(s) in flight`,
    )
    .with({ code: "missing_line" }, (r) => `session ${r.session_index} skips seq ${r.expected}..${r.found} with the chain intact; a write did not land`)
    .with({ code: "empty_chain" }, () => "no lines to verify")
    .with({ code: "line_too_long" }, (r) => `line ${r.line} is longer than ${r.limit} bytes; not read`)
    .exhaustive(unreachable);
}

/** The verdict line exactly as the reference's `aegis verify` prints it. */
export function describeVerdict(v: Verification): string {
  return match(v.verdict)
    .with({ status: "verified" }, () => {
      if (v.trust === "unpinned") return "Verified (unpinned)";
      const [only, ...more] = v.key_ids;
      return only !== undefined && more.length === 0 ? `Verified (pinned to ${only})` : "Verified (pinned)";
    })
    .with({ status: "tampered" }, (t) => `Tampered: ${describeTampered(t.reason)}`)
    .with({ status: "indeterminate" }, (i) => `Indeterminate: ${describeIndeterminate(i.reason)}`)
    .exhaustive(unreachable);
}
