import { canonicalize, joinMembers, members, withMember } from "../wire/canonical.js";
import { LineHash, tryParseDigest, sameHex, type KeyId } from "../wire/digest.js";
import type { SigningKey } from "./keys.js";
import { verifyStrict, type PublicKeyFault, type VerifyingKey } from "./ed25519.js";
import { checkHex, hexInto, toHex } from "../wire/hex.js";
import type { JsonObject } from "../wire/json.js";
import type { SignatureFault } from "../verify/verdict.js";

/**
 * The signing rule (SPEC §4, §8.4): the signature covers the canonical form of the Line
 * with `signature` omitted and `key_id` present, and `line_hash` covers the Line with
 * both. This module is the only place that builds the signed bytes, for typed and
 * untyped Lines alike.
 */
export function signingInput(line: object): string {
  return canonicalize(line, "signature");
}

/** A Line as written: its canonical text and the hash the next Line chains to. */
export interface SealedLine {
  readonly text: string;
  readonly lineHash: LineHash;
}

/**
 * Canonicalize a Line and, when `key` is given, sign it: `key_id` is set, the signing
 * input is the canonical form without `signature`, and `signature` is added (SPEC §4).
 * The Line must carry its chain members already (`seq`, `prev_hash`).
 *
 * @throws CanonicalFormError when a member is outside the value space.
 */
export function sealLine(line: Readonly<Record<string, unknown>>, key?: SigningKey): SealedLine {
  const sorted = members(line, "$", "signature");
  let text: string;
  if (key === undefined) {
    text = joinMembers(sorted);
  } else {
    const unsigned = withMember(
      sorted.filter(([k]) => k !== "key_id"),
      "key_id",
      key.keyId,
    );
    const signature = toHex(key.sign(UTF8.encode(joinMembers(unsigned))));
    text = joinMembers(withMember(unsigned, "signature", signature));
  }
  return { text, lineHash: LineHash.of(text) };
}

/** The Session key as a verifier holds it: decoded once at the `open` Line. */
export interface SessionKey {
  readonly keyId: KeyId;
  readonly key: VerifyingKey | PublicKeyFault;
}

/**
 * Check a Line's signature against its Session's key, reading `signature` and `key_id`
 * off the Line itself. The order of checks fixes which fault is reported; it is the
 * reference's: presence, encodings, key id, key, then the signature.
 */
export function checkLineSignature(line: JsonObject, session: SessionKey, input: () => string = () => signingInput(line)): SignatureFault | undefined {
  const claim = signatureClaim(line, session);
  if (claim.code !== "check") return claim;
  return verifyClaim(claim, input()) ? undefined : { code: "bad_signature" };
}

/** The last check of {@link checkLineSignature}: the curve arithmetic (SPEC §8.5), on this thread. */
export function verifyClaim(claim: SignatureToCheck, input: string): boolean {
  return verifyStrict(claim.key, encodeScratch(input), decodeSignature(claim.signature));
}

/** {@link verifyClaim} of a message that is `row` without its bytes [start, end). */
export function verifyClaimCut(claim: SignatureToCheck, row: Uint8Array, start: number, end: number): boolean {
  const length = row.length - (end - start);
  // Stryker disable next-line ArithmeticOperator: equivalent E2
  if (length > scratch.length) scratch = new Uint8Array(Math.max(length, scratch.length * 2));
  scratch.set(row.subarray(0, start));
  scratch.set(row.subarray(end), start);
  return verifyStrict(claim.key, scratch.subarray(0, length), decodeSignature(claim.signature));
}

/**
 * What is left of a signature check once everything but the curve arithmetic has passed:
 * the key, and the signature as 128 lowercase hex. A parallel verifier hands this to
 * another thread; the faults before it are decided here, in the reference's order.
 */
export interface SignatureToCheck {
  readonly code: "check";
  readonly key: VerifyingKey;
  readonly signature: string;
}

/** Every check of {@link checkLineSignature} but the last: a fault, or what the last one needs. */
export function signatureClaim(line: JsonObject, session: SessionKey): SignatureFault | SignatureToCheck {
  const signature = line["signature"];
  const keyId = line["key_id"];
  if (signature === undefined || keyId === undefined) return { code: "unsigned" };
  if (typeof signature !== "string" || checkHex(signature, 128) !== undefined) return { code: "bad_signature" };
  if (typeof keyId !== "string") return { code: "bad_signature" };
  // The Session's own key id, as a writer writes it, needs no parse.
  if (!sameHex(keyId, session.keyId)) {
    // Stryker disable next-line StringLiteral: equivalent E3
    const found = tryParseDigest("KeyId", keyId);
    if (!found.ok) return { code: "bad_signature" };
    return { code: "key_mismatch", expected: session.keyId, found: found.digest };
  }
  if (session.key === "not_a_point") return { code: "malformed_public_key" };
  // A small-order key decodes, so dalek builds it, and then no signature verifies.
  if (session.key === "small_order") return { code: "bad_signature" };
  return { code: "check", key: session.key, signature };
}

/*
 * A verifier checks a signature per Line. Encoding the signing input and the signature
 * into buffers kept for the purpose, instead of allocating two per Line, keeps a
 * million-Line verification's memory flat (the buffers are used synchronously and only
 * here).
 */
let scratch = new Uint8Array(1 << 16);
const signatureScratch = new Uint8Array(64);
const UTF8 = new TextEncoder();

function encodeScratch(text: string): Uint8Array {
  let encoded = UTF8.encodeInto(text, scratch);
  // Too long for the buffer: grow it and encode again (a Line of over 64 KiB is rare).
  while (encoded.read < text.length) {
    scratch = new Uint8Array(scratch.length * 2);
    encoded = UTF8.encodeInto(text, scratch);
  }
  return scratch.subarray(0, encoded.written);
}

function decodeSignature(hex: string): Uint8Array {
  hexInto(hex, signatureScratch, 0);
  return signatureScratch;
}
