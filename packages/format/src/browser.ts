/**
 * `@aegis/format/browser`: the reader, the canonical form and the verifier of `@aegis/format`
 * with no Node API, for browsers and other JavaScript hosts (adr/0015): no `node:` module and
 * no `Buffer`, so a bundle needs no polyfill (adr/0031). The very modules Node runs: only
 * SHA-256 and the last step of Ed25519 (SPEC §8.5 step 4) differ, and a bundler that honours
 * `package.json`'s `browser` field puts noble's in place of `node:crypto`'s
 * (`ED25519_BACKEND` says which one runs). Writing records stays in `@aegis/format`: a
 * browser reads and verifies them. What is here is what a verifier in a page needs, and
 * what the report page's views share with the CLI (reading a Line, the describe functions).
 *
 * Signatures are checked on this thread unless a {@link CheckPool} is given (Web Workers):
 * the verdict is the same either way (SPEC §8.2).
 *
 * @packageDocumentation
 */
import { DEFAULT_TUNING, type CheckPool, type Tuning } from "./verify/deferred-checks.js";
import { MAX_ROW_BYTES, streamRowChunks } from "./wire/row-splitter.js";
import { walkRows } from "./verify/row-verifier.js";
import type { WalkOptions } from "./verify/walk.js";
import type { Verification } from "./verify/verdict.js";

export {
  KeyId,
  LineHash,
  PolicySetHash,
  PrevHash,
  RequestDigest,
  ResponseDigest,
  ToolSpecDigest,
  sha256Hex,
  type Digest,
  type DigestKind,
} from "./wire/digest.js";
export { checkHex, fromCheckedHex, type HexFault } from "./wire/hex.js";
export { OutOfSpaceNumber, type JsonArray, type JsonObject, type JsonValue, type OutOfSpaceKind } from "./wire/json.js";

export { passesPrechecks, verifyStrict, verifyingKey, type PublicKeyFault, type VerifyingKey } from "./crypto/ed25519.js";

export {
  SCHEMA_VERSION,
  type KnownLineType,
  type LineType,
  type SignatureHex,
  type PublicKeyHex,
  type FsGrant,
  type HttpGrant,
  type NetGrant,
  type CapabilityGrant,
  type PolicyOutcome,
  type CapabilityOutcome,
  type ExecutionOutcome,
  type DecisionAxes,
  type ApprovedScope,
  type ApprovalVerdict,
  type EnvelopeAccess,
  type IntentPayload,
  type OutcomePayload,
  type DecisionPayload,
  type OpenPayload,
  type Confinement,
  type LineHeader,
  type SignatureBlock,
  type OpenLine,
  type IntentLine,
  type OutcomeLine,
  type DecisionLine,
  type CloseLine,
  type SignedPayload,
} from "./wire/line-types.js";
export { readTypedLine, type TypedLine, type TypedLineResult } from "./wire/line-read.js";
export { readRecordBytes, type RecordReadOptions, type RecordRow } from "./wire/record-reader.js";

export { decodeUtf8, detachedString } from "./wire/text.js";
export { messageOf } from "./durable/thrown.js";
export { unmatched } from "./unreachable.js";
export { exitCodeOfVerdict, type ExitCode } from "./verify/exit-code.js";
export {
  describeIndeterminate,
  describePosition,
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
export { type UnfinishedCall, type UnfinishedCalls } from "./verify/unfinished-calls.js";
export { MAX_ROW_BYTES } from "./wire/row-splitter.js";
export { type WalkOptions, type WalkedLine } from "./verify/walk.js";
export { RecordReadError } from "./verify/row-verifier.js";
export { type CheckPool, type Tuning } from "./verify/deferred-checks.js";
export { SignatureBatch, checksOf, type EncodedBatch } from "./verify/signature-batch.js";
// The split walk's reader of a piece and its answer, shared with `aegis verify`'s row threads
// (ADR 0027, ADR 0028): the page's workers and main thread read and walk pieces with these.
export { readPiece, readPieceLater, type PieceCheck } from "./verify/row-work.js";
export type { PieceAnswer } from "./verify/piece-answer.js";
export { DEFAULT_SPLIT, type SplitTuning } from "./verify/split-tuning.js";
// The one piece driver (ADR 0027, ADR 0028): the page gives it its record's pieces and its workers.
export { walkPieces, type PieceReader, type PieceSource } from "./verify/split-walk.js";
export type { Piece } from "./verify/piece-cutter.js";

/** How {@link verifyRecordBytes} verifies: a walk's trust set and `onLine`, and where signatures go. */
export interface BytesVerifyOptions extends WalkOptions {
  /** Workers that check signatures while the walk goes on; absent: every check on this thread. */
  readonly pool?: CheckPool;
  /** How checks are spread over the pool. */
  readonly tuning?: Tuning;
  /** The row bound (SPEC §13.1); defaults to {@link MAX_ROW_BYTES}. */
  readonly maxRowBytes?: number;
  /**
   * Between slices of the input: a browser passes a function that yields to the page (a
   * task boundary), so the page stays responsive and can show `bytesRead`.
   */
  readonly between?: (bytesRead: number) => Promise<void>;
}

/**
 * Verify a record held in memory (SPEC §8): the answer `aegis verify` gives for the same
 * bytes. The input is walked in slices of 1 MiB, with {@link BytesVerifyOptions.between}
 * awaited after each.
 */
export async function verifyRecordBytes(bytes: Uint8Array, options: BytesVerifyOptions = {}): Promise<Verification> {
  const limit = options.maxRowBytes ?? MAX_ROW_BYTES;
  const between = options.between;
  async function* slices(): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < bytes.length; at += SLICE) {
      yield bytes.subarray(at, Math.min(at + SLICE, bytes.length));
      if (between !== undefined) await between(Math.min(at + SLICE, bytes.length));
    }
  }
  return walkRows(streamRowChunks(slices(), limit), "record", options, options.pool, options.tuning ?? DEFAULT_TUNING);
}

const SLICE = 1 << 20;
