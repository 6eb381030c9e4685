import { unmatched } from "../unreachable.js";
import { match } from "ts-pattern";
import type { KeyId, LineHash, PrevHash } from "../wire/digest.js";
import type { UnfinishedCalls } from "./unfinished-calls.js";

/**
 * The verdict model (SPEC §8): three states, each with a typed reason and a stable `code`.
 * The human text of each reason is the reference's, word for word, so outputs of the two
 * implementations can be compared line by line.
 */

/** A Line's address: `seq` restarts per Session, so a position is a pair (SPEC §7). */
export interface Position {
  /** Which Session: the file's `open` Lines counted from 0. */
  readonly session_index: number;
  /** The Line's `seq` within that Session, 0 at its `open`. */
  readonly seq: number;
}

/** A position as reasons' texts write it: `session <session_index> seq <seq>` (SPEC §8.3). */
export function describePosition(at: Position): string {
  return `session ${at.session_index} seq ${at.seq}`;
}

/** Why a signed Line does not authenticate (SPEC §8.4). */
export type SignatureFault =
  | { readonly code: "unsigned" }
  | { readonly code: "key_mismatch"; readonly expected: KeyId; readonly found: KeyId }
  | { readonly code: "malformed_public_key" }
  | { readonly code: "bad_signature" };

/**
 * Why a file is Tampered: it contradicts itself (SPEC §8.3). The first one met ends the walk.
 * Each variant has the fields of its row in the SPEC table; `describeTampered` gives
 * its text.
 */
export type TamperedReason =
  /** A Line's `prev_hash` is not the hash of the Line before it in its Session. */
  | { readonly code: "chain_broken"; readonly at: Position; readonly expected: LineHash; readonly found: PrevHash }
  /** A `seq` below the one the Session expects next, or an `open` whose `seq` is not 0. */
  | { readonly code: "seq_out_of_order"; readonly session_index: number; readonly expected: number; readonly found: number }
  /** A signature that is required, or present, does not authenticate the Line; `source` says why (SPEC §8.4). */
  | { readonly code: "bad_signature"; readonly at: Position; readonly source: SignatureFault }
  /** An `open`'s `prev_session_tail` does not name the last Line before it, as when the Session before was truncated (SPEC §7). */
  | {
      readonly code: "session_boundary_broken";
      readonly session_index: number;
      readonly expected: LineHash;
      /** The `prev_session_tail` the `open` Line carries; absent when it carries none. */
      readonly found?: string;
    }
  /** Row `line` cannot be read as a Line where it stands; `detail` is one of those SPEC §8.3 lists. */
  | { readonly code: "malformed_line"; readonly line: number; readonly detail: string }
  /** A trust set was given and an `open` publishes a key outside it; `key_id` names the key. */
  | { readonly code: "untrusted_key"; readonly at: Position; readonly key_id: KeyId }
  /** A second `decision` answers an `approval_id` already decided in the file. */
  | { readonly code: "duplicate_decision"; readonly at: Position; readonly approval_id: string }
  /** aegis-ts (SPEC §19.4): a checkpoint vouches for more Lines than the record holds that verify: it was cut short. */
  | { readonly code: "truncated"; readonly checkpoint: string; readonly origin: string; readonly size: number; readonly lines: number }
  /** aegis-ts (SPEC §19.4): the record's first `size` Lines do not have the root a checkpoint states. */
  | {
      readonly code: "checkpoint_mismatch";
      readonly checkpoint: string;
      readonly origin: string;
      readonly size: number;
      /** The root the checkpoint states, base64. */
      readonly expected: string;
      /** The root of the record's first `size` Lines, base64. */
      readonly found: string;
    }
  /** aegis-ts (SPEC §19.4): a checkpoint is not signed by the key of the Session holding its last Line (a trusted one, when pinned). */
  | { readonly code: "checkpoint_unsigned"; readonly checkpoint: string; readonly origin: string; readonly size: number }
  /** aegis-ts (SPEC §19.4): two signed checkpoints of one origin and one size state different roots: the record forked. */
  | { readonly code: "inconsistent_checkpoints"; readonly origin: string; readonly size: number; readonly first: string; readonly second: string };

/**
 * Why a file is Indeterminate: nothing in it contradicts itself, but something cannot be
 * decided (SPEC §8.3). The first one met is the one reported, unless a Tampered reason comes
 * later. `describeIndeterminate` gives its text.
 */
export type IndeterminateReason =
  /** A `line_type` this verifier does not know, kept exactly as written (SPEC §5.2). */
  | { readonly code: "unknown_line_type"; readonly at: Position; readonly line_type: string }
  /** A `checkpoint` Line: reserved, and not defined by this version (SPEC §5.3). */
  | { readonly code: "reserved_checkpoint"; readonly at: Position }
  /** The last non-blank row does not parse: a write cut short. */
  | { readonly code: "torn_final_line"; readonly line: number }
  /** The last Session has no `close`; `in_flight` lists the calls whose intents no signature covers (SPEC §10). */
  | { readonly code: "unanchored_tail"; readonly session_index: number; readonly in_flight: readonly string[] }
  /** A `seq` skipped ahead over an intact chain: a write that did not land, not tampering (SPEC §4). */
  | { readonly code: "missing_line"; readonly session_index: number; readonly expected: number; readonly found: number }
  /** The file holds no non-blank rows. */
  | { readonly code: "empty_chain" }
  /** aegis-ts (SPEC §13.1): a line longer than the verifier's bound; the walk stops there. */
  | { readonly code: "line_too_long"; readonly line: number; readonly limit: number }
  /**
   * aegis-ts (SPEC §19.4): witnesses were required, and a checkpoint is cosigned by fewer
   * distinct given witness keys than `required` (counted as SPEC §19.3 counts them).
   */
  | {
      readonly code: "too_few_witnesses";
      readonly checkpoint: string;
      readonly origin: string;
      readonly size: number;
      readonly cosigned: number;
      readonly required: number;
    };

/**
 * The answer a verification gives (SPEC §8.6): `verified`, or `tampered` or `indeterminate`
 * with the reason. Same bytes, same verdict.
 */
export type Verdict =
  | { readonly status: "verified" }
  | { readonly status: "indeterminate"; readonly reason: IndeterminateReason }
  | { readonly status: "tampered"; readonly reason: TamperedReason };

/** Every reason `code` a verdict can carry, Tampered and Indeterminate alike: the names the vectors and `--json` use (SPEC §8.3). */
export type ReasonCode = TamperedReason["code"] | IndeterminateReason["code"];

/** Whether the verdict's keys were supplied out of band (SPEC §8.4). */
export type TrustLabel = "pinned" | "unpinned";

/**
 * What one verification reports (SPEC §8.6, §13.4): the verdict and what the walk saw on
 * the way. {@link describeVerdict} gives its verdict line.
 */
export interface Verification {
  /** Verified, Tampered or Indeterminate, with the reason when it is not Verified. */
  readonly verdict: Verdict;
  /** The highest position a valid signature covers; absent when none does. */
  readonly coverage?: Position;
  /** Every key an `open` Line published, first-seen order, without repeats. */
  readonly key_ids: readonly KeyId[];
  /**
   * Whether the verdict's keys were supplied out of band (SPEC §8.4): `pinned` only when a
   * trust slice was supplied and the verdict is `verified`.
   */
  readonly trust: "pinned" | "unpinned";
  /** Non-blank rows read (the walk stops at the first Tampered row). */
  readonly lines: number;
  /** Sessions begun by an accepted `open` Line. */
  readonly sessions: number;
  /** The line_hash of the last Line the walk accepted; absent when it accepted none. */
  readonly head?: LineHash;
  /**
   * aegis-ts (SPEC §19.4): a checkpoint covered every Line, so a last Session with no close
   * is Verified; the calls that were in flight when it stopped, as `unanchored_tail` listed them.
   */
  readonly anchored?: { readonly checkpoint: string; readonly size: number; readonly in_flight: readonly string[] };
  /**
   * aegis-ts (SPEC §13.4): the calls of Sessions that ended (a later `open` followed, or
   * the last one closed) whose `intent` has no `outcome`, as when a writer was killed and
   * restarted. It never changes the verdict.
   */
  readonly unfinished_calls: UnfinishedCalls;
}

/** The text of a signature fault (SPEC §8.4): what a `bad_signature` reason's text ends with. */
function describeSignatureFault(fault: SignatureFault): string {
  return match(fault)
    .with({ code: "unsigned" }, () => "line carries no signature")
    .with({ code: "key_mismatch" }, (f) => `line was signed under key ${f.found}, not ${f.expected}`)
    .with({ code: "malformed_public_key" }, () => "not a valid ed25519 public key")
    .with({ code: "bad_signature" }, () => "signature does not match this line")
    .exhaustive(unmatched);
}

/** The text of a Tampered reason, the reference's word for word (SPEC §8.3): the verdict line after `Tampered: `. */
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
    .with(
      { code: "truncated" },
      (r) => `checkpoint ${r.checkpoint} of ${r.origin} vouches for ${r.size} lines, but only ${r.lines} verify; the record was cut short`,
    )
    .with(
      { code: "checkpoint_mismatch" },
      (r) => `the first ${r.size} lines hash to root ${r.found}, not the root ${r.expected} that checkpoint ${r.checkpoint} of ${r.origin} states`,
    )
    .with({ code: "checkpoint_unsigned" }, (r) => `checkpoint ${r.checkpoint} of ${r.origin} is not signed by the key of the session holding line ${r.size}`)
    .with(
      { code: "inconsistent_checkpoints" },
      (r) => `checkpoints ${r.first} and ${r.second} of ${r.origin} state different roots for ${r.size} lines; the record forked`,
    )
    .exhaustive(unmatched);
}

/** The text of an Indeterminate reason, the reference's word for word (SPEC §8.3): the verdict line after `Indeterminate: `. */
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
    .with(
      { code: "too_few_witnesses" },
      (r) => `checkpoint ${r.checkpoint} of ${r.origin} (${r.size} lines) is cosigned by ${r.cosigned} of the ${r.required} witnesses required`,
    )
    .exhaustive(unmatched);
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
    .exhaustive(unmatched);
}
