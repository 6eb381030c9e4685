/**
 * `@aegis/proof`: C2SP checkpoints and proofs over Agent Action Records. The RFC 6962 tree
 * of a record's Lines, computed while the verifier walks it; checkpoints (signed tree heads)
 * in the `tlog-checkpoint` signed-note form; inclusion proofs in the `tlog-proof` form;
 * consistency proofs; witness cosignatures (`tlog-cosignature/v1`) checked against keys in
 * the vkey form.
 *
 * For: operators who checkpoint records and hand out single calls, and the auditors and witnesses
 * who check them with nothing but a public key.
 *
 * @packageDocumentation
 */
export { TreeHasher, leafHash, verifyConsistency } from "./merkle.js";
export { NoteFormatError, parseNote, type Note, type NoteFault, type NoteSignature } from "./note.js";
export { SIGNATURE_TYPE, VerifierKeyError, formatVerifierKey, noteVerifier, parseVerifierKey, type NoteVerifier, type VerifierKeyFault } from "./keys.js";
export { cosignCheckpoint, openCheckpoint, readCheckpointText, signCheckpoint, type Checkpoint, type CheckpointOpening, type Cosigned } from "./checkpoint.js";
export { formatTlogProof, parseTlogProof, type TlogProof } from "./tlog-proof.js";
export { defaultOrigin, recordInclusionProof, recordTree, type RecordTree, type RecordTreeOptions } from "./record-tree.js";
export { verifyWithCheckpoints, type CheckpointFinding, type CheckpointedVerification, type GivenCheckpoint } from "./checkpointed.js";
export { openCheckpointedWriter, type CheckpointedWriter, type CheckpointingOptions } from "./checkpointing.js";
export { callLines, lineNumber, proveLines, type LineChoice, type LineProofs } from "./prove.js";
export { checkProof, describeProofCheck, type ProofCheck } from "./proof-check.js";
export { pushCheckpoint, type PushResult } from "./witness/push.js";
export { serveWitness } from "./witness/serve.js";
