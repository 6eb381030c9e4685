import { sha256Hex } from "../crypto/sha256.js";
import { checkHex, describeHexFault, type HexFault } from "./hex.js";
import { FaultError } from "../fault-error.js";

/**
 * Branded digests (SPEC §2). Each kind is a 64-lowercase-hex string carrying a required
 * unique-symbol brand, so a `PolicySetHash` handed where a `PrevHash` is expected is a
 * compile error, and a raw string is never a digest until it is hashed or parsed.
 */
declare const digestKind: unique symbol;

/** The name of each digest brand (SPEC §2), as `tryParseDigest` and `DigestParseError` take it. */
export type DigestKind = "LineHash" | "PrevHash" | "PolicySetHash" | "RequestDigest" | "ResponseDigest" | "ToolSpecDigest" | "KeyId";

/**
 * A digest of kind `K`: 64 lowercase hex with a required brand, so that one kind cannot
 * stand where another belongs. Made only by hashing (a kind's `of`) or by checking text (its
 * `parse`, or `tryParseDigest`); never cast a string to one. Each kind below spells its brand
 * out, so that the public face names the kinds and not this device (ADR 0030).
 */
export type Digest<K extends DigestKind> = string & { readonly [digestKind]: K };

/** SHA-256 of a Line's canonical form, signature included (SPEC §4). */
export type LineHash = string & { readonly [digestKind]: "LineHash" };
/** A Line's back-reference: the predecessor's LineHash, or the genesis digest (SPEC §7). */
export type PrevHash = string & { readonly [digestKind]: "PrevHash" };
/** SHA-256 of the canonical projection of a Policy Set (SPEC §6). */
export type PolicySetHash = string & { readonly [digestKind]: "PolicySetHash" };
/** SHA-256 of the verbatim request bytes (SPEC §9). */
export type RequestDigest = string & { readonly [digestKind]: "RequestDigest" };
/** SHA-256 of the verbatim response bytes (SPEC §9). */
export type ResponseDigest = string & { readonly [digestKind]: "ResponseDigest" };
/** SHA-256 of the canonical form of one MCP tool definition (SPEC §17.6, aegis-ts). */
export type ToolSpecDigest = string & { readonly [digestKind]: "ToolSpecDigest" };
/** SHA-256 of a 32-byte Ed25519 public key (SPEC §8.4). */
export type KeyId = string & { readonly [digestKind]: "KeyId" };

/**
 * Thrown by a kind's `parse` (`LineHash.parse`, `KeyId.parse`, ...) for text that is not 64
 * lowercase hex (SPEC §2); `tryParseDigest` returns the fault instead.
 */
export class DigestParseError extends FaultError<HexFault> {
  constructor(
    /** The kind the text was parsed as. */
    readonly kind: DigestKind,
    /** Why the text is not a digest: its length, or the first byte that is not lowercase hex. */
    fault: HexFault,
  ) {
    super("DigestParseError", fault, (f) => `${kind}: ${describeHexFault(f)}`);
  }
}

export { sha256Hex };

function parse<K extends DigestKind>(kind: K, text: string): Digest<K> {
  const fault = checkHex(text, 64);
  if (fault !== undefined) throw new DigestParseError(kind, fault);
  return text as Digest<K>;
}

/** Parse without throwing: the digest, or why the text is not one. `kind` names the brand. */
export function tryParseDigest<K extends DigestKind>(
  _kind: K,
  text: string,
): { readonly ok: true; readonly digest: Digest<K> } | { readonly ok: false; readonly fault: HexFault } {
  const fault = checkHex(text, 64);
  return fault === undefined ? { ok: true, digest: text as Digest<K> } : { ok: false, fault };
}

/**
 * Makes `LineHash` values: `of` hashes a Line's canonical bytes (SPEC §4); `parse` checks text
 * and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const LineHash = {
  /** The hash of canonical line bytes (the UTF-8 of the canonical form). */
  of: (canonicalBytes: Uint8Array | string): LineHash => sha256Hex(canonicalBytes) as LineHash,
  parse: (text: string): LineHash => parse("LineHash", text),
};

/**
 * Makes `PrevHash` values: `GENESIS` for an `open`, `after` for the successor of a Line whose
 * hash is known; `parse` checks text and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const PrevHash = {
  /** 64 zeros: the `prev_hash` of every `open` Line (SPEC §7). */
  GENESIS: "0".repeat(64) as PrevHash,
  /** The back-reference a successor of the Line with this hash carries. */
  after: (predecessor: LineHash): PrevHash => predecessor as string as PrevHash,
  parse: (text: string): PrevHash => parse("PrevHash", text),
};

/**
 * Makes `PolicySetHash` values: `of` hashes a Policy Set's canonical projection (SPEC §15.4);
 * `parse` checks text and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const PolicySetHash = {
  of: (canonicalProjection: Uint8Array | string): PolicySetHash => sha256Hex(canonicalProjection) as PolicySetHash,
  parse: (text: string): PolicySetHash => parse("PolicySetHash", text),
};

/**
 * Makes `RequestDigest` values: `of` hashes request bytes exactly as received (SPEC §9); `parse`
 * checks text and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const RequestDigest = {
  /** Hash the bytes exactly as received: no parsing, no re-encoding (SPEC §9). */
  of: (verbatimRequest: Uint8Array): RequestDigest => sha256Hex(verbatimRequest) as RequestDigest,
  parse: (text: string): RequestDigest => parse("RequestDigest", text),
};

/**
 * Makes `ResponseDigest` values: `of` hashes response bytes exactly as they left (SPEC §9);
 * `parse` checks text and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const ResponseDigest = {
  of: (verbatimResponse: Uint8Array): ResponseDigest => sha256Hex(verbatimResponse) as ResponseDigest,
  parse: (text: string): ResponseDigest => parse("ResponseDigest", text),
};

/**
 * Makes `ToolSpecDigest` values: `of` hashes a tool definition's canonical bytes (SPEC §17.6);
 * `parse` checks text and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const ToolSpecDigest = {
  /** The hash of a tool definition's canonical bytes (SPEC §17.6). */
  of: (canonicalDefinition: Uint8Array | string): ToolSpecDigest => sha256Hex(canonicalDefinition) as ToolSpecDigest,
  parse: (text: string): ToolSpecDigest => parse("ToolSpecDigest", text),
};

/**
 * Makes `KeyId` values: `of` hashes a 32-byte Ed25519 public key (SPEC §8.4); `parse` checks
 * text and throws `DigestParseError` unless it is 64 lowercase hex.
 */
export const KeyId = {
  of: (publicKey: Uint8Array): KeyId => sha256Hex(publicKey) as KeyId,
  parse: (text: string): KeyId => parse("KeyId", text),
};

/** Does `prev` name the Line whose hash is `tail`? Constant-time over the 64 hex bytes. */
export function chainsTo(prev: PrevHash, tail: LineHash): boolean {
  return sameHex(prev, tail);
}

/** Equality of two digests of one kind, in constant time. */
export function sameDigest<K extends DigestKind>(a: Digest<K>, b: Digest<K>): boolean {
  return sameHex(a, b);
}

/** Equality of two hex strings, in constant time when their lengths agree. */
export function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  // Every character is visited, whatever the first difference: no early exit. (Two
  // buffers and timingSafeEqual per comparison cost a verifier a microsecond per Line.)
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
