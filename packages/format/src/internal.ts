/**
 * `@aegis/format/internal`: what aegis's own packages share and nobody else should need: the
 * durable-file layer of ADR 0004 (group commit, fsync, locks), bounded file reads, the strict
 * JSON reader, the row splitter and the incremental chain walk, text and error helpers.
 * It follows the other `@aegis/*` packages of the same version and makes no promise of
 * compatibility to anyone else; the public API is `@aegis/format`.
 *
 * @packageDocumentation
 */
export { GroupCommit, type CommitTarget, type Urgency } from "./durable/group-commit.js";
export { asError, errnoOf, messageOf, syncDirectory, syncNow, syncOffThread } from "./durable/sync.js";
export {
  PRIVATE_DIRECTORY_MODE,
  PRIVATE_FILE_MODE,
  makeDirectories,
  pathExists,
  readFully,
  replaceFileDurably,
  replaceFileFromParts,
} from "./durable/files.js";
export { openRegularFd, openRegularFile, openRegularFileSync, type RegularAccess } from "./durable/regular-file.js";
export { InputFileError, readInputFile } from "./durable/input-file.js";
export { readJsonFile } from "./durable/input-file.js";
export { acquireLock, acquireLockFile, lockPathFor, processRuns, processStart, type LockResult } from "./durable/lock.js";
export { sha256Hex, sameHex } from "./wire/digest.js";
export { checkHex, describeHexFault } from "./wire/hex.js";
export { isPublicKeyFileText, publicKeyFileText, readKeyList, type KeyListReading } from "./crypto/public-key-file.js";
export { unmatched, unreachable } from "./unreachable.js";
export { decodeUtf8, detachedString, isBlank, trimWhiteSpace } from "./wire/text.js";
export { describeIoError } from "./durable/io-text.js";
export { describeFileKind, describeInputFileFault, kindOf, type FileKind, type InputFileFault } from "./durable/input-file.js";
export { readRow, type ReadRow } from "./wire/row-read.js";
export { JsonSyntaxError, OutOfSpaceNumber, isJsonObject, parseJson, parseRow, type ParsedRow, type OutOfSpaceKind } from "./wire/json.js";
export { SMALL_ORDER_ENCODINGS } from "./crypto/ed25519.js";
export { isLineTime, readLineBody, type LineBody } from "./wire/line-read.js";
export { bodyOf } from "./wire/record-reader.js";
export { checkLineSignature, sealLine, type SealedLine, type SessionKey } from "./crypto/signing.js";
export { RowSplitter, type Row } from "./wire/row-splitter.js";
export { readRows } from "./wire/row-file.js";
export { ChainWalk, type WalkedLine } from "./verify/walk.js";
export { verifyChainBytesParallel, verifyChainFileTuned } from "./verify/verify.js";
export { verifySplitBytes, verifySplitFile } from "./verify/split-file.js";
export type { SplitTuning } from "./verify/split-walk.js";
// The one-file build's entry hands a worker thread it started to this (ADR 0023).
export { runWorkerThread } from "./verify/worker-url.js";
export { DEFAULT_TUNING, type Tuning } from "./verify/deferred-checks.js";
export { resealLines, type LooseLine, type ResealOptions } from "./write/reseal.js";
export { RECORDED_REASON } from "./write/recorded-reasons.js";
// Public types the shared helpers above take, so aegis's packages can import from one place.
export type { HexFault, JsonArray, JsonObject, JsonValue, LockHolder, WalkOptions } from "./index.js";
