import { type TamperedReason, type Verification, type VerifyOptions, verifyRecord } from "@aegis/format";
import { openCheckpoint, type Checkpoint } from "./checkpoint.js";
import type { NoteVerifier } from "./keys.js";
import { leafHash, TreeHasher } from "./merkle.js";

/**
 * Verifying a record with checkpoints kept apart from it (SPEC §19.4): each must be signed by
 * the key of the Session holding its last Line and state the root of the record's first Lines;
 * one that covers every Line anchors a last Session that has no close.
 */

/** A checkpoint to hold a record to: its bytes, what it states, and how to name it. */
export interface GivenCheckpoint {
  /** How verdicts name it: the file it came from. */
  readonly label: string;
  /** The signed note, as read. */
  readonly bytes: Uint8Array;
  /** What its text states (its signature not yet checked). */
  readonly stated: Checkpoint;
}

/** What was found of each checkpoint, in the order given. */
export type CheckpointFinding = {
  /**
   * `matches`: signed by the Session's key, and the record's first `size` Lines have its root;
   * `truncated`, `unsigned`, `mismatch`: as SPEC §19.4 says; `not_reached`: not looked at, the
   * record itself is Tampered before it.
   */
  readonly code: "matches" | "truncated" | "unsigned" | "mismatch" | "not_reached";
  readonly label: string;
  readonly origin: string;
  readonly size: number;
  /**
   * With witness keys given (SPEC §19.4): the witnesses whose cosignatures of it checked, as
   * §19.3 counts and names them; absent when none were given.
   */
  readonly cosigned?: readonly string[];
};

/** The verifier's answer with the checkpoints taken into account, and each one's finding. */
export interface CheckpointedVerification {
  /** The verdict, with a checkpoint's Tampered reason or anchoring applied (SPEC §19.4). */
  readonly verification: Verification;
  /** What was found of each checkpoint, in the order given. */
  readonly findings: readonly CheckpointFinding[];
}

/**
 * Verify the record (a path, or a stream named `name`) as `verifyRecord` does, then
 * hold it to `checkpoints` (SPEC §19.4). Precedence: the record's own Tampered verdict (its
 * first break); then two signed checkpoints of one origin and size with different roots
 * (`inconsistent_checkpoints`); then by kind first and the order given second: a record with
 * fewer Lines than one covers (`truncated`), one not signed by its Session's key
 * (`checkpoint_unsigned`, also when that key is not trusted), one whose root differs
 * (`checkpoint_mismatch`). When none is found and a checkpoint covers every Line the walk
 * accepted, an `unanchored_tail` becomes Verified, its calls in flight kept as
 * `anchored.in_flight`. Without checkpoints the answer is the verifier's.
 */
export async function verifyWithCheckpoints(
  source: string | { readonly stream: AsyncIterable<Uint8Array>; readonly name: string },
  checkpoints: readonly GivenCheckpoint[],
  options: Pick<VerifyOptions, "trust" | "onProgress" | "threads"> & {
    /** Witness keys (type 0x04) whose cosignatures count (SPEC §19.3, §19.4). */
    readonly witnesses?: readonly NoteVerifier[];
    /** How many distinct given witness keys must have cosigned each checkpoint (default 0). */
    readonly minWitnesses?: number;
  } = {},
): Promise<CheckpointedVerification> {
  const { witnesses, minWitnesses = 0, ...verifying } = options;
  const sizes = new Set(checkpoints.map((c) => c.stated.size));
  const tree = new TreeHasher();
  const atSize = new Map<number, { root: Buffer; key: string | undefined }>();
  let sessionKey: string | undefined;
  // The Lines the walk accepted (SPEC §19.1's leaves): not `lines`, which also counts a torn
  // or over-long last row, and the row a Tampered walk stopped at.
  let accepted = 0;
  // Without checkpoints no Line need be seen: a per-Line callback makes the walking thread
  // read every Line in full (ADR 0027), the work the split walk gives to its threads.
  const walk: VerifyOptions =
    checkpoints.length === 0
      ? verifying
      : {
          ...verifying,
          onLine: (line) => {
            accepted++;
            if (line.lineType.token === "open" && typeof line.value["public_key"] === "string") sessionKey = line.value["public_key"];
            if (sizes.size === 0) return;
            tree.add(leafHash(line.canonical()));
            if (sizes.has(tree.size)) atSize.set(tree.size, { root: tree.root(), key: sessionKey });
          },
        };
  const verification =
    typeof source === "string" ? await verifyRecord({ path: source }, walk) : await verifyRecord({ lines: source.stream, name: source.name }, walk);
  if (checkpoints.length === 0) return { verification, findings: [] };

  const trusted = options.trust === undefined ? undefined : new Set(options.trust);
  const findings: CheckpointFinding[] = checkpoints.map((c) => {
    const base = { label: c.label, origin: c.stated.origin, size: c.stated.size, ...(witnesses === undefined ? {} : { cosigned: [] }) };
    if (verification.verdict.status === "tampered") return { code: "not_reached", ...base };
    // No Session holds "Line 0": a checkpoint of no Lines has no key to be signed by.
    if (c.stated.size === 0) return { code: "unsigned", ...base };
    const at = atSize.get(c.stated.size);
    if (at === undefined) return { code: "truncated", ...base };
    if (at.key === undefined || (trusted !== undefined && !trusted.has(at.key))) return { code: "unsigned", ...base };
    // A cosignature by a given witness key that does not check refuses the note (SPEC §19.3).
    const opening = openCheckpoint(c.bytes, [Buffer.from(at.key, "hex")], witnesses);
    if (opening.code !== "opened") return { code: "unsigned", ...base };
    const cosigned = witnesses === undefined ? {} : { cosigned: opening.cosigned.map((w) => w.witness.name) };
    return { code: opening.checkpoint.root.equals(at.root) ? "matches" : "mismatch", ...base, ...cosigned };
  });
  if (verification.verdict.status === "tampered") return { verification, findings };

  const broken = firstBreak(checkpoints, findings, atSize, accepted);
  if (broken !== undefined) return { verification: { ...verification, verdict: { status: "tampered", reason: broken }, trust: "unpinned" }, findings };

  // Witnesses required: the first checkpoint, in the order given, cosigned by too few (SPEC §19.4).
  const short = findings.find((f) => (f.cosigned?.length ?? 0) < minWitnesses);
  if (short !== undefined) {
    const reason = {
      code: "too_few_witnesses",
      checkpoint: short.label,
      origin: short.origin,
      size: short.size,
      cosigned: short.cosigned?.length ?? 0,
      required: minWitnesses,
    } as const;
    return { verification: { ...verification, verdict: { status: "indeterminate", reason }, trust: "unpinned" }, findings };
  }

  // "Covers every Line": its size is the number of Lines the walk accepted (SPEC §19.4).
  const whole = findings.find((f) => f.code === "matches" && f.size === accepted);
  const verdict = verification.verdict;
  if (whole !== undefined && verdict.status === "indeterminate" && verdict.reason.code === "unanchored_tail") {
    return {
      verification: {
        ...verification,
        verdict: { status: "verified" },
        trust: trusted === undefined ? "unpinned" : "pinned",
        anchored: { checkpoint: whole.label, size: whole.size, in_flight: verdict.reason.in_flight },
      },
      findings,
    };
  }
  return { verification, findings };
}

function firstBreak(
  checkpoints: readonly GivenCheckpoint[],
  findings: readonly CheckpointFinding[],
  atSize: ReadonlyMap<number, { root: Buffer }>,
  accepted: number,
): TamperedReason | undefined {
  const signed = checkpoints.filter((_, i) => findings[i]?.code === "matches" || findings[i]?.code === "mismatch");
  for (const [i, a] of signed.entries()) {
    const b = signed.slice(i + 1).find((o) => o.stated.origin === a.stated.origin && o.stated.size === a.stated.size && !o.stated.root.equals(a.stated.root));
    if (b !== undefined) return { code: "inconsistent_checkpoints", origin: a.stated.origin, size: a.stated.size, first: a.label, second: b.label };
  }
  for (const code of ["truncated", "unsigned", "mismatch"] as const) {
    const f = findings.find((x) => x.code === code);
    if (f === undefined) continue;
    if (code === "truncated") return { code: "truncated", checkpoint: f.label, origin: f.origin, size: f.size, lines: accepted };
    if (code === "unsigned") return { code: "checkpoint_unsigned", checkpoint: f.label, origin: f.origin, size: f.size };
    const stated = checkpoints.find((c) => c.label === f.label)?.stated.root ?? Buffer.alloc(0);
    const found = atSize.get(f.size)?.root.toString("base64") ?? "";
    return { code: "checkpoint_mismatch", checkpoint: f.label, origin: f.origin, size: f.size, expected: stated.toString("base64"), found };
  }
  return undefined;
}
