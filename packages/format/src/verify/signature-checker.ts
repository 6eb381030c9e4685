import type { LineHash } from "../wire/digest.js";
import { verifyClaim, verifyClaimCut, type SignatureToCheck } from "../crypto/signing.js";
import type { Position } from "./verdict.js";
import type { UnfinishedMark } from "./unfinished-calls.js";

// The seam between the walk and the curve arithmetic (walk.ts decides every other fault): the
// sequential walk checks now, the parallel verifier defers (deferred-checks.ts).

/**
 * What the walk's state was just before a signature it let another thread check: enough to
 * give, should that check fail, the result the sequential walk would have stopped with
 * there (see {@link ChainWalk.finishAt}).
 */
export interface SignatureStop {
  readonly at: Position;
  readonly rows: number;
  readonly sessions: number;
  readonly keyIds: number;
  readonly coverage: Position | undefined;
  readonly head: LineHash | undefined;
  readonly unfinished: UnfinishedMark;
}

/**
 * Where the walk's signature checks go. The walk decides every fault but the curve
 * arithmetic itself (key, encodings, key id, in the reference's order); that last check is
 * made here, on this thread, unless the checker defers it: the walk then goes on as if it
 * passed, and a deferred check that fails is answered by {@link ChainWalk.finishAt}.
 */
export interface SignatureChecker {
  /** True when the check is deferred; false when it was made now and failed. */
  check(claim: SignatureToCheck, input: SigningInput, stop: () => SignatureStop): boolean;
}

/** A Line's signing input: as text, or, for most rows, as the row's bytes less a cut. Valid during `check` only. */
export interface SigningInput {
  text(): string;
  /** The row, when the signing input is its bytes without [cut.start, cut.end). */
  readonly row: Uint8Array | undefined;
  readonly cut: { readonly start: number; readonly end: number } | undefined;
}

/** The curve arithmetic of one signature, now, on this thread. */
export function checkNow(claim: SignatureToCheck, input: SigningInput): boolean {
  return input.row !== undefined && input.cut !== undefined
    ? verifyClaimCut(claim, input.row, input.cut.start, input.cut.end)
    : verifyClaim(claim, input.text());
}

/** Every check made now, on this thread: the sequential walk. */
export const CHECK_NOW: SignatureChecker = { check: checkNow };
