/**
 * `@aegis/proof`: C2SP checkpoints and proofs over Agent Action Records. The RFC 6962 tree
 * of a record's Lines, computed while the verifier walks it; checkpoints (signed tree heads)
 * in the `tlog-checkpoint` signed-note form; inclusion proofs in the `tlog-proof` form;
 * consistency proofs; witness cosignatures (`tlog-cosignature/v1`) checked against keys in
 * the vkey form.
 *
 * @packageDocumentation
 */
export {
  EMPTY_ROOT,
  RangeHasher,
  TreeHasher,
  consistencyRanges,
  inclusionRanges,
  leafHash,
  nodeHash,
  rangeRoots,
  verifyConsistency,
  verifyInclusion,
  type LeafRange,
} from "./merkle.js";
export {
  MAX_NOTE_BYTES,
  MAX_NOTE_SIGNATURES,
  NoteFormatError,
  decodeBase64,
  describeNoteFault,
  formatNote,
  isKeyName,
  parseNote,
  signatureLine,
  type Note,
  type NoteFault,
  type NoteSignature,
} from "./note.js";
export {
  SIGNATURE_TYPE,
  VerifierKeyError,
  checkSignature,
  describeVerifierKeyFault,
  formatVerifierKey,
  noteKeyId,
  noteVerifier,
  parseVerifierKey,
  verifierOf,
  type NoteVerifier,
  type SignatureType,
  type VerifierKeyFault,
} from "./keys.js";
export {
  checkpointText,
  cosignCheckpoint,
  cosignedMessage,
  openCheckpoint,
  readCheckpointText,
  signCheckpoint,
  type Checkpoint,
  type CheckpointOpening,
  type Cosigned,
} from "./checkpoint.js";
export {
  ProofFormatError,
  TLOG_PROOF_HEADER,
  describeProofFormatFault,
  formatTlogProof,
  parseTlogProof,
  type ProofFormatFault,
  type TlogProof,
} from "./tlog-proof.js";
export { defaultOrigin, lineLeaf, recordConsistencyProof, recordInclusionProof, recordTree, type RecordTree, type RecordTreeOptions } from "./record-tree.js";
export { verifyWithCheckpoints, type CheckpointFinding, type CheckpointedVerification, type GivenCheckpoint } from "./checkpointed.js";
export { openCheckpointedWriter, type CheckpointedWriter, type CheckpointingOptions } from "./checkpointing.js";
export { callLines, lineNumber, proveLines, type LineChoice, type LineProofs } from "./prove.js";
export { checkProof, describeProofCheck, type ProofCheck, type ProofCheckCode } from "./proof-check.js";
