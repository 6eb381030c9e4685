import { match } from "ts-pattern";
import { unmatched } from "@aegis/format/internal";
import { decodeBase64, MAX_NOTE_BYTES } from "./note.js";
import { FaultError } from "@aegis/format";

/**
 * `c2sp.org/tlog-proof@v1` files: a header line, optional `extra` (here: the Line's
 * canonical bytes), `index N`, the inclusion proof's hashes one per line, a blank line, then
 * the checkpoint verbatim.
 */

/** The header line of a proof file. */
export const TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1";
/** The most hashes an inclusion proof of a tree of at most 2^53 leaves can hold. */
const MAX_PROOF_HASHES = 64;

/** A proof that one entry is in a checkpointed tree. */
export interface TlogProof {
  /** The opaque extra data, unauthenticated until the proof checks. */
  readonly extra: Buffer | undefined;
  /** The entry's index in the tree, from 0 (a record's Line n is index n-1). */
  readonly index: number;
  /** The inclusion proof: the leaf's sibling first, the root's child last. */
  readonly hashes: readonly Buffer[];
  /** The checkpoint, exactly as it was issued (a signed note). */
  readonly checkpoint: Buffer;
}

/** Why a proof file was refused. */
export type ProofFormatFault =
  | { readonly code: "too_large"; readonly size: number }
  | { readonly code: "bad_header" }
  | { readonly code: "bad_extra" }
  | { readonly code: "bad_index"; readonly text: string }
  | { readonly code: "bad_hash"; readonly line: number }
  | { readonly code: "too_many_hashes" }
  | { readonly code: "no_checkpoint" };

/** A proof file that is not a well-formed `tlog-proof`. */
export class ProofFormatError extends FaultError<ProofFormatFault> {
  constructor(fault: ProofFormatFault) {
    super("ProofFormatError", fault, describeProofFormatFault);
  }
}

/** The words of a {@link ProofFormatFault}. */
function describeProofFormatFault(fault: ProofFormatFault): string {
  return match(fault)
    .with({ code: "too_large" }, (f) => `${f.size} bytes, over the limit for a proof`)
    .with({ code: "bad_header" }, () => `the first line is not ${TLOG_PROOF_HEADER}`)
    .with({ code: "bad_extra" }, () => "the extra line is not `extra` and canonical base64")
    .with({ code: "bad_index" }, (f) => `${JSON.stringify(f.text)} is not \`index\` and a decimal without leading zeroes`)
    .with({ code: "bad_hash" }, (f) => `line ${f.line} is not the base64 of a 32-byte hash`)
    .with({ code: "too_many_hashes" }, () => `more than ${MAX_PROOF_HASHES} hashes`)
    .with({ code: "no_checkpoint" }, () => "no blank line and checkpoint after the hashes")
    .exhaustive(unmatched);
}

/** The text of a proof file. */
export function formatTlogProof(proof: TlogProof): string {
  const lines = [TLOG_PROOF_HEADER];
  if (proof.extra !== undefined) lines.push(`extra ${proof.extra.toString("base64")}`);
  lines.push(`index ${proof.index}`, ...proof.hashes.map((h) => h.toString("base64")), "");
  return `${lines.join("\n")}\n${proof.checkpoint.toString("utf8")}`;
}

/**
 * Read a proof file. The checkpoint is returned as bytes, unopened.
 *
 * @throws ProofFormatError when it is not a well-formed `tlog-proof`.
 */
export function parseTlogProof(bytes: Uint8Array): TlogProof {
  if (bytes.length > MAX_NOTE_BYTES * 2) throw new ProofFormatError({ code: "too_large", size: bytes.length });
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  let number = 0;
  const nextLine = (): string | undefined => {
    const end = buffer.indexOf(0x0a, at);
    if (end < 0) return undefined;
    const line = buffer.toString("latin1", at, end);
    at = end + 1;
    number += 1;
    return line;
  };
  if (nextLine() !== TLOG_PROOF_HEADER) throw new ProofFormatError({ code: "bad_header" });
  let line = nextLine();
  let extra: Buffer | undefined;
  if (line?.startsWith("extra ") === true) {
    extra = decodeBase64(line.slice("extra ".length));
    if (extra === undefined) throw new ProofFormatError({ code: "bad_extra" });
    line = nextLine();
  }
  const index = line?.startsWith("index ") === true ? line.slice("index ".length) : undefined;
  if (index === undefined || !/^(0|[1-9][0-9]*)$/.test(index) || !Number.isSafeInteger(Number(index)))
    throw new ProofFormatError({ code: "bad_index", text: line ?? "" });
  const hashes: Buffer[] = [];
  for (line = nextLine(); line !== undefined && line !== ""; line = nextLine()) {
    const hash = decodeBase64(line);
    if (hash === undefined || hash.length !== 32) throw new ProofFormatError({ code: "bad_hash", line: number });
    if (hashes.length === MAX_PROOF_HASHES) throw new ProofFormatError({ code: "too_many_hashes" });
    hashes.push(hash);
  }
  if (line === undefined || at >= buffer.length) throw new ProofFormatError({ code: "no_checkpoint" });
  return { extra, index: Number(index), hashes, checkpoint: Buffer.from(buffer.subarray(at)) };
}
