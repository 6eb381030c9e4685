/**
 * `@aegis/format`: the Agent Action Record, schema version 2 (SPEC.md). Everything a
 * runtime needs to write records and a stranger needs to verify them: branded digests, the
 * wire types, the canonical form, strict Ed25519, signing keys, the writer and the streaming
 * verifier.
 *
 * For: whoever verifies a record or writes one from their own runtime, and authors of a second
 * implementation. What aegis's own packages share is in `@aegis/format/internal`.
 *
 * @packageDocumentation
 */
export {
  KeyId,
  LineHash,
  PolicySetHash,
  PrevHash,
  RequestDigest,
  ResponseDigest,
  ToolSpecDigest,
  DigestParseError,
  type Digest,
  type DigestKind,
} from "./wire/digest.js";
export type { EnvelopeLookup, EnvelopeRead, EnvelopeSink } from "./envelope-boundary.js";
export type { HexFault } from "./wire/hex.js";
export { type JsonArray, type JsonObject, type JsonValue, type OutOfSpaceKind } from "./wire/json.js";
export { CanonicalFormError, type CanonicalFault } from "./wire/canonical.js";
export { verifyStrict, verifyingKey, type PublicKeyFault, type VerifyingKey } from "./crypto/ed25519.js";
export type { PublicKeyHandle } from "./crypto/ed25519-backend.js";
export { SigningKey, insecureDevKey } from "./crypto/keys.js";
export { KeyFileError, readKeyFile, writeKeyFile, type KeyFileFault, type PublicKeyFound, type ReadKeyFileOptions } from "./crypto/key-file.js";
export {
  KNOWN_LINE_TYPES,
  SCHEMA_VERSION,
  type ApprovalVerdict,
  type ApprovedScope,
  type CapabilityGrant,
  type CapabilityOutcome,
  type CloseLine,
  type DecisionAxes,
  type DecisionLine,
  type DecisionPayload,
  type EnvelopeAccess,
  type ExecutionOutcome,
  type FsGrant,
  type HttpGrant,
  type IntentLine,
  type IntentPayload,
  type KnownLineType,
  type LineHeader,
  type LineType,
  type NetGrant,
  type OpenLine,
  type OpenPayload,
  type OutcomeLine,
  type OutcomePayload,
  type PolicyOutcome,
  type SignatureBlock,
  type SignatureHex,
  type PublicKeyHex,
} from "./wire/line-types.js";
export { type TypedLine, type TypedLineResult, type Unsigned } from "./wire/line-read.js";
export { type RecordReadOptions, type RecordRow } from "./wire/record-reader.js";
export { readRecord } from "./wire/record-file.js";
export { signingInput } from "./crypto/signing.js";
export {
  describeVerdict,
  type IndeterminateReason,
  type Position,
  type SignatureFault,
  type TamperedReason,
  type TrustLabel,
  type Verdict,
  type Verification,
} from "./verify/verdict.js";
export { type UnfinishedCall, type UnfinishedCalls } from "./verify/unfinished-calls.js";
export type { WalkOptions, WalkedLine } from "./verify/walk.js";
export { RecordReadError, type VerifyOptions } from "./verify/verify.js";
export { readVerifying, type VerifyingRead } from "./verify/verifying-read.js";
export {
  RecordWriter,
  type Appended,
  type CallEnding,
  type CallOpening,
  type CallResult,
  type CallStart,
  type AppendedLine,
  type RecordWriterOptions,
  type EndOptions,
} from "./write/writer.js";
export { RecordWriterError, type WriterFault } from "./write/writer-error.js";
export { repairTornTail, type RepairResult } from "./write/repair.js";
export { type InputFileFault } from "./durable/input-file.js";
export { verifyRecord, type RecordSource } from "./verify/verify-record.js";
export { OutOfSpaceNumber } from "./wire/json.js";
export type { FileKind } from "./durable/input-file.js";
export type { LockHolder, RecoveredLock } from "./durable/lock.js";
export { FaultError } from "./fault-error.js";
