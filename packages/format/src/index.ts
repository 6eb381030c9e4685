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
} from "./digest.js";
export { checkHex, describeHexFault, type HexFault } from "./hex.js";
export { unreachable } from "./unreachable.js";
export { decodeUtf8, describeIoError, isBlank, trimWhiteSpace } from "./text.js";
export { errnoOf, messageOf } from "./durable/sync.js";
export { makeDirectories } from "./durable/files.js";
export { readRow, type ReadRow } from "./row.js";
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
} from "./json.js";
export { CanonicalFormError, MAX_SAFE_INTEGER, canonicalize, describeCanonicalFault, tryCanonicalize, type CanonicalFault } from "./canonical.js";
export { SMALL_ORDER_ENCODINGS, verifyStrict, verifyingKey, type PublicKeyFault, type VerifyingKey } from "./ed25519.js";
export { INSECURE_DEV_SEED, SigningKey, insecureDevKey } from "./keys.js";
export { KeyFileError, describeKeyFileFault, readKeyFile, writeKeyFile, type KeyFileFault } from "./key-file.js";
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
} from "./lines.js";
export { readLineBody, readTypedLine, type LineBody, type TypedLine, type TypedLineResult, type Unsigned } from "./line-parse.js";
export { bodyOf, readRecord, readRecordBytes, type RecordReadOptions, type RecordRow } from "./record-reader.js";
export { checkLineSignature, sealLine, signingInput, type SealedLine, type SessionKey } from "./signing.js";
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
} from "./verdict.js";
export { MAX_ROW_BYTES, RowSplitter, readRows, type Row } from "./rows.js";
export { ChainWalk, type WalkOptions, type WalkedLine } from "./walk.js";
export { ChainReadError, verifyChainBytes, verifyChainFile, type VerifyOptions } from "./verify.js";
export {
  ChainWriter,
  type Appended,
  type CallEnding,
  type CallOpening,
  type CallResult,
  type CallStart,
  type ChainWriterOptions,
  type EndOptions,
  type EnvelopeSink,
} from "./writer.js";
export { ChainWriterError, describeWriterFault, type WriterFault } from "./writer-error.js";
export { repairTornTail, type RepairResult } from "./repair.js";
export { resealLines, type LooseLine, type ResealOptions } from "./reseal.js";
export { acquireLockFile, lockPathFor, type LockHolder, type LockResult } from "./durable/lock.js";
