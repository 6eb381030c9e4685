import { match } from "ts-pattern";
import { KeyId, type JsonObject } from "@aegis/format";
import { checkLineSignature, isJsonObject, readRow, unmatched, verifyingKey } from "@aegis/format/internal";
import { openCheckpoint, type Checkpoint, type CheckpointOpening, type Cosigned } from "./checkpoint.js";
import type { NoteVerifier } from "./keys.js";
import { leafHash, verifyInclusion } from "./merkle.js";
import { ProofFormatError, parseTlogProof, type TlogProof } from "./tlog-proof.js";

/** What checking a `tlog-proof` offline found: its entry is in the signed tree, or why not. */
export type ProofCheck =
  | {
      readonly code: "included";
      readonly proof: TlogProof & { readonly extra: Buffer };
      /** The Line the proof carries, as JSON. */
      readonly line: JsonObject;
      /**
       * `signed`: the Line carries a signature, and it checks under the key that signed the
       * checkpoint; `unsigned`: an intent, say, which the checkpoint alone authenticates.
       */
      readonly lineSignature: "signed" | "unsigned";
      readonly checkpoint: Checkpoint;
      /** The log key whose signature on the checkpoint checked. */
      readonly signedBy: NoteVerifier;
      /** The witnesses given whose cosignatures checked, one per distinct witness key (SPEC §19.3). */
      readonly cosigned: readonly Cosigned[];
    }
  /** Not a well-formed proof file. */
  | { readonly code: "malformed"; readonly detail: string }
  /** The checkpoint inside did not open under the keys given. */
  | { readonly code: "checkpoint_refused"; readonly opening: Exclude<CheckpointOpening, { code: "opened" }> }
  /** No `extra`: the entry's data is not in the proof, so there is nothing to prove. */
  | { readonly code: "no_entry" }
  /** The index is not below the checkpoint's tree size. */
  | { readonly code: "index_out_of_range"; readonly index: number; readonly size: number }
  /** The hashes do not lead from the entry to the checkpoint's root. */
  | { readonly code: "not_included"; readonly index: number; readonly size: number }
  /** The entry is in the tree but is not a Line: it does not read as a row (SPEC §3.3), has no canonical form (§3.2), or is not a JSON object. */
  | { readonly code: "not_a_line"; readonly index: number; readonly detail: string }
  /** The Line carries a signature that does not check under the checkpoint's key. */
  | { readonly code: "bad_line_signature"; readonly index: number; readonly detail: string };

/** Every `code` a {@link ProofCheck} can carry. */
export type ProofCheckCode = ProofCheck["code"];

/**
 * Check a `tlog-proof` offline: the checkpoint opens under one of `publicKeys` (named by its
 * origin), and the leaf whose data is the proof's `extra` is at `index` in that tree.
 */
export function checkProof(bytes: Uint8Array, publicKeys: readonly Uint8Array[], witnesses: readonly NoteVerifier[] = []): ProofCheck {
  let proof: TlogProof;
  try {
    proof = parseTlogProof(bytes);
  } catch (error) {
    if (error instanceof ProofFormatError) return { code: "malformed", detail: error.message };
    throw error;
  }
  const opening = openCheckpoint(proof.checkpoint, publicKeys, witnesses);
  if (opening.code !== "opened") return { code: "checkpoint_refused", opening };
  const { checkpoint } = opening;
  const extra = proof.extra;
  if (extra === undefined) return { code: "no_entry" };
  if (proof.index >= checkpoint.size) return { code: "index_out_of_range", index: proof.index, size: checkpoint.size };
  if (!verifyInclusion(leafHash(extra), proof.index, checkpoint.size, proof.hashes, checkpoint.root)) {
    return { code: "not_included", index: proof.index, size: checkpoint.size };
  }
  // Read as the verifier reads a row (SPEC §3.3, §3.2): a Line has a canonical form, or it
  // has no signing input to check a signature over.
  const read = readRow(extra);
  if (!read.ok) return { code: "not_a_line", index: proof.index, detail: read.detail };
  const line = read.value;
  if (!isJsonObject(line)) return { code: "not_a_line", index: proof.index, detail: "not a JSON object" };
  let lineSignature: "signed" | "unsigned" = "unsigned";
  if (line["signature"] !== undefined) {
    const publicKey = opening.signedBy.publicKey;
    const fault = checkLineSignature(line, { keyId: KeyId.of(publicKey), key: verifyingKey(publicKey) }, read.signingInput);
    if (fault !== undefined) return { code: "bad_line_signature", index: proof.index, detail: fault.code.replaceAll("_", " ") };
    lineSignature = "signed";
  }
  return { code: "included", proof: { ...proof, extra }, line, lineSignature, checkpoint, signedBy: opening.signedBy, cosigned: opening.cosigned };
}

/** The words of a {@link ProofCheck}, as `aegis proof verify` prints them. */
export function describeProofCheck(check: ProofCheck): string {
  return match(check)
    .with({ code: "included" }, (c) => `included: entry ${c.proof.index} of ${c.checkpoint.size} in ${c.checkpoint.origin}`)
    .with({ code: "malformed" }, (c) => `not a tlog-proof: ${c.detail}`)
    .with({ code: "checkpoint_refused" }, (c) =>
      match(c.opening)
        .with({ code: "malformed" }, (o) => `the checkpoint is not one: ${o.detail}`)
        .with({ code: "unsigned" }, (o) => `the checkpoint of ${o.origin} is not signed by a key given`)
        .with({ code: "bad_signature" }, (o) => `the checkpoint's signature by ${o.name} does not check`)
        .exhaustive(unmatched),
    )
    .with({ code: "no_entry" }, () => "the proof carries no entry (no extra line)")
    .with({ code: "index_out_of_range" }, (c) => `index ${c.index} is not below the tree size ${c.size}`)
    .with({ code: "not_included" }, (c) => `the hashes do not lead from entry ${c.index} to the root of the tree of ${c.size}`)
    .with({ code: "not_a_line" }, (c) => `entry ${c.index} is not a Line: ${c.detail}`)
    .with({ code: "bad_line_signature" }, (c) => `Line ${c.index + 1} is in the tree, but its own signature does not check: ${c.detail}`)
    .exhaustive(unmatched);
}
