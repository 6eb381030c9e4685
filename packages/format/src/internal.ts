/**
 * `@aegis/format/internal`: what aegis's own packages share and nobody else should need: the
 * durable-file helpers a store does not need (`@aegis/format/durable` holds those), the strict
 * JSON reader, the row splitter and the incremental chain walk, text and error helpers.
 * It follows the other `@aegis/*` packages of the same version and makes no promise of
 * compatibility to anyone else; the public API is `@aegis/format`.
 *
 * @packageDocumentation
 */
export { asError, errnoOf, messageOf } from "./durable/thrown.js";
export { replaceFileFromParts } from "./durable/files.js";
export { readJsonFile } from "./durable/input-file.js";
export { sha256Hex, sameHex } from "./wire/digest.js";
export { checkHex, describeHexFault } from "./wire/hex.js";
export { isPublicKeyFileText, readKeyList } from "./crypto/public-key-file.js";
export { unmatched, unreachable } from "./unreachable.js";
export { exitCodeOfVerdict, type ExitCode } from "./verify/exit-code.js";
export { decodeUtf8, detachedString } from "./wire/text.js";
export { describeIoError } from "./durable/io-text.js";
export { readRow } from "./wire/row-read.js";
export { JsonSyntaxError, isJsonObject, parseJson } from "./wire/json.js";
export { isLineTime, readLineBody } from "./wire/line-read.js";
export { checkLineSignature, sealLine } from "./crypto/signing.js";
// The one-file build's entry hands a worker thread it started to this (ADR 0023).
export { runWorkerThread } from "./verify/worker-entry.js";
export { resealLines, type LooseLine, type ResealOptions } from "./write/reseal.js";
export { RECORDED_REASON } from "./write/recorded-reasons.js";
// Public types the shared helpers above take, so aegis's packages can import from one place.
export { sameDigest, tryParseDigest } from "./wire/digest.js";
export { canonicalize, tryCanonicalize } from "./wire/canonical.js";
export { insecureDevKey } from "./crypto/keys.js";
export { describeKeyFileFault } from "./crypto/key-file.js";
export { publicKeyPathOf, writePublicKeyFile } from "./crypto/public-key-file.js";
export { readTypedLine } from "./wire/line-read.js";
export { readRecordBytes } from "./wire/record-reader.js";
export { readRecord } from "./wire/record-file.js";
export { describePosition } from "./verify/verdict.js";
export { verifyRecordFiles, type FileVerification } from "./verify/many-files.js";
export { describeWriterFault } from "./write/writer-error.js";
export { describeRecoveredLock } from "./durable/lock.js";
export { KeyFileError, writeKeyFile, type KeyFileFault } from "./crypto/key-file.js";
export { verifyStrict, verifyingKey, type VerifyingKey } from "./crypto/ed25519.js";
export { signingInput } from "./crypto/signing.js";
export type { OutcomeLine } from "./wire/line-types.js";
