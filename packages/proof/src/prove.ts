import type { WalkedLine } from "@aegis/format";
import { isJsonObject } from "@aegis/format/internal";
import { openCheckpoint, readCheckpointText } from "./checkpoint.js";
import { NoteFormatError, parseNote } from "./note.js";
import { recordTree, type RecordTree } from "./record-tree.js";
import { formatTlogProof } from "./tlog-proof.js";

/**
 * Proofs of chosen Lines of a record under one of its checkpoints (SPEC §19.3): two passes
 * over the record, one to find the Lines and check the checkpoint against them, one for the
 * proofs, each in O(log n) memory per proof.
 */

/** Chooses Lines to prove, as the verifier's walk meets them (index from 0). */
export type LineChoice = (line: WalkedLine, index: number) => boolean;

/** The proofs, or why none were made. */
export type LineProofs =
  | { readonly code: "proved"; readonly proofs: readonly { readonly index: number; readonly text: string }[] }
  /** The checkpoint file is not a well-formed checkpoint. */
  | { readonly code: "not_a_checkpoint"; readonly detail: string }
  /** The record has fewer Lines that verify than the checkpoint covers. */
  | { readonly code: "record_short"; readonly size: number }
  /** The checkpoint is not signed by the key of the Session holding its last Line. */
  | { readonly code: "unsigned"; readonly size: number }
  /** The record's first Lines do not have the checkpoint's root. */
  | { readonly code: "mismatch"; readonly size: number }
  /** No Line among those the checkpoint covers was chosen. */
  | { readonly code: "none_chosen"; readonly size: number };

/** Every Line of one call: its intent, its outcome, and the `decision` answering its park. */
export function callLines(callId: string): LineChoice {
  const parks = new Set<string>();
  return (line) => {
    const value = line.value;
    if (value["call_id"] === callId) {
      const policy = value["policy"];
      if (isJsonObject(policy) && typeof policy["approval_id"] === "string") parks.add(policy["approval_id"]);
      return true;
    }
    return line.lineType.token === "decision" && typeof value["approval_id"] === "string" && parks.has(value["approval_id"]);
  };
}

/** Line `number` (from 1). */
export function lineNumber(number: number): LineChoice {
  return (_, index) => index + 1 === number;
}

/** Prove the Lines `choose` picks among those `checkpoint` covers, each as a `tlog-proof` text. */
export async function proveLines(path: string, checkpoint: Uint8Array, choose: LineChoice): Promise<LineProofs> {
  let size: number;
  try {
    size = readCheckpointText(parseNote(checkpoint).text).size;
  } catch (error) {
    if (error instanceof NoteFormatError) return { code: "not_a_checkpoint", detail: error.message };
    throw error;
  }
  let first: RecordTree;
  try {
    first = await recordTree(path, { size, keep: choose });
  } catch (error) {
    if (error instanceof RangeError) return { code: "record_short", size };
    throw error;
  }
  const opening = openCheckpoint(checkpoint, first.sessionKey === undefined ? [] : [Buffer.from(first.sessionKey, "hex")]);
  if (opening.code !== "opened") return { code: "unsigned", size };
  if (!opening.checkpoint.root.equals(first.root)) return { code: "mismatch", size };
  if (first.kept.length === 0) return { code: "none_chosen", size };
  const second = await recordTree(path, { size, inclusions: first.kept.map((k) => k.index) });
  const note = Buffer.from(checkpoint);
  return {
    code: "proved",
    proofs: first.kept.map((k) => ({
      index: k.index,
      text: formatTlogProof({ extra: k.data, index: k.index, hashes: second.inclusions.get(k.index) ?? [], checkpoint: note }),
    })),
  };
}
