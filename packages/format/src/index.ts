/**
 * `@aegis/format`: the Agent Action Record, schema version 2 (SPEC.md). What a runtime needs to
 * write records and a stranger needs to verify them: the writer, the streaming verifier, signing
 * keys, and the branded digests and outcome types their signatures name.
 *
 * For: whoever verifies a record or writes one from their own runtime. A second implementation
 * follows SPEC.md and the vectors, not this package's internals. What aegis's own packages share
 * is in `@aegis/format/internal`.
 *
 * @packageDocumentation
 */

// Verifying (SPEC §8).
export { verifyRecord, type RecordSource } from "./verify/verify-record.js";
export { RecordReadError } from "./verify/row-verifier.js";
export type { VerifyOptions } from "./verify/verify-options.js";
export type { WalkedLine } from "./verify/walk.js";
export {
  describeVerdict,
  type IndeterminateReason,
  type Position,
  type SignatureFault,
  type TamperedReason,
  type Verdict,
  type Verification,
} from "./verify/verdict.js";
export type { UnfinishedCall, UnfinishedCalls } from "./verify/unfinished-calls.js";
export { readVerifying, type VerifyingRead } from "./verify/verifying-read.js";
export type { RecordRow } from "./wire/record-reader.js";

// Writing (SPEC §13).
export {
  RecordWriter,
  type Appended,
  type AppendedLine,
  type CallEnding,
  type CallOpening,
  type CallResult,
  type CallStart,
  type EndOptions,
  type RecordWriterOptions,
} from "./write/writer.js";
export { RecordWriterError, type WriterFault } from "./write/writer-error.js";
export type { CanonicalFault } from "./wire/canonical.js";
export { repairTornTail, type RepairResult } from "./write/repair.js";
export type { LockHolder, RecoveredLock } from "./durable/lock.js";
export type { EnvelopeLookup, EnvelopeRead, EnvelopeSink } from "./envelope-boundary.js";
export { FaultError } from "./fault-error.js";

// What a Line holds, as the writer takes it and the verifier reports it (SPEC §5).
export type {
  ApprovalVerdict,
  ApprovedScope,
  CapabilityGrant,
  CapabilityOutcome,
  DecisionAxes,
  DecisionPayload,
  EnvelopeAccess,
  ExecutionOutcome,
  FsGrant,
  HttpGrant,
  IntentPayload,
  KnownLineType,
  LineType,
  NetGrant,
  OutcomePayload,
  PolicyOutcome,
} from "./wire/line-types.js";
export { KeyId, LineHash, PolicySetHash, PrevHash, RequestDigest, ResponseDigest, ToolSpecDigest } from "./wire/digest.js";
export { OutOfSpaceNumber, type JsonObject, type JsonValue, type OutOfSpaceKind } from "./wire/json.js";

// Keys (SPEC §13.6).
export { SigningKey } from "./crypto/keys.js";
export { readKeyFile, type ReadKeyFileOptions } from "./crypto/key-file.js";
export type { PublicKeyHandle } from "./crypto/ed25519-backend.js";
