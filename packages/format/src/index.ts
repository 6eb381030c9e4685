/**
 * @aegis/format: the Chain of Agent Action Records, schema version 2 (see SPEC.md).
 * Everything a runtime needs to write records and a stranger needs to verify them.
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
  chainsTo,
  sameDigest,
  sameHex,
  sha256Hex,
  tryParseDigest,
  type Digest,
  type DigestKind,
} from "./wire/digest.js";
export { checkHex, describeHexFault, type HexFault } from "./wire/hex.js";
export { unreachable } from "./unreachable.js";
export type { EnvelopeLookup, EnvelopeRead, EnvelopeSink } from "./envelope-boundary.js";
export { decodeUtf8, describeIoError, detachedString, isBlank, trimWhiteSpace } from "./wire/text.js";
export { errnoOf, messageOf } from "./durable/sync.js";
export { makeDirectories } from "./durable/files.js";
export { InputFileError, describeFileKind, describeInputFileFault, kindOf, readInputFile, type FileKind, type InputFileFault } from "./durable/input-file.js";
export { readRow, type ReadRow } from "./wire/row-read.js";
export {
  JsonSyntaxError,
  OutOfSpaceNumber,
  isJsonObject,
  parseJson,
  parseRow,
  type ParsedRow,
  type JsonArray,
  type JsonObject,
  type JsonValue,
  type OutOfSpaceKind,
} from "./wire/json.js";
export { CanonicalFormError, MAX_SAFE_INTEGER, canonicalize, describeCanonicalFault, tryCanonicalize, type CanonicalFault } from "./wire/canonical.js";
export { SMALL_ORDER_ENCODINGS, verifyStrict, verifyingKey, type PublicKeyFault, type VerifyingKey } from "./crypto/ed25519.js";
export { INSECURE_DEV_SEED, SigningKey, insecureDevKey } from "./crypto/keys.js";
export { KeyFileError, describeKeyFileFault, readKeyFile, writeKeyFile, type KeyFileFault } from "./crypto/key-file.js";
export {
  KNOWN_LINE_TYPES,
  SCHEMA_VERSION,
  lineTypeOf,
  type ApprovalVerdict,
  type ApprovedScope,
  type CapabilityGrant,
  type CapabilityOutcome,
  type CloseLine,
  type DecisionAxes,
  type DecisionLine,
  type DecisionPayload,
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
  type PublicKeyHex,
  type SignatureBlock,
  type SignatureHex,
  type SignedPayload,
} from "./wire/line-types.js";
export { readLineBody, readTypedLine, type LineBody, type TypedLine, type TypedLineResult, type Unsigned } from "./wire/line-read.js";
export { bodyOf, readRecord, readRecordBytes, type RecordReadOptions, type RecordRow } from "./wire/record-reader.js";
export { checkLineSignature, sealLine, signingInput, type SealedLine, type SessionKey } from "./crypto/signing.js";
export {
  describeIndeterminate,
  describePosition,
  describeSignatureFault,
  describeTampered,
  describeVerdict,
  type IndeterminateReason,
  type Position,
  type ReasonCode,
  type SignatureFault,
  type TamperedReason,
  type TrustLabel,
  type Verdict,
  type Verification,
} from "./verify/verdict.js";
export { MAX_ROW_BYTES, RowSplitter, readRows, type Row } from "./wire/row-splitter.js";
export { ChainWalk, type WalkOptions, type WalkedLine } from "./verify/walk.js";
export { ChainReadError, verifyChainBytes, verifyChainFile, verifyChainStream, type VerifyOptions } from "./verify/verify.js";
export {
  ChainWriter,
  type Appended,
  type CallEnding,
  type CallOpening,
  type CallResult,
  type CallStart,
  type ChainWriterOptions,
  type EndOptions,
} from "./write/writer.js";
export { ChainWriterError, describeWriterFault, type WriterFault } from "./write/writer-error.js";
export { repairTornTail, type RepairResult } from "./write/repair.js";
export { resealLines, type LooseLine, type ResealOptions } from "./write/reseal.js";
export { acquireLockFile, describeRecoveredLock, lockPathFor, type LockHolder, type LockResult, type RecoveredLock } from "./durable/lock.js";
