import type { RequestDigest, ResponseDigest } from "./wire/digest.js";

/*
 * The Envelope as the Chain sees it (SPEC §9): the Chain holds digests, the Envelope the
 * bytes they name. Every interface across that boundary, on one page:
 *
 * - `EnvelopeSink` (here): what the writer needs to keep a call's bytes.
 * - `EnvelopeRead` (here): what reading one digest answers.
 * - `EnvelopeLookup` (here): what recheck asks for a request's bytes.
 * - `EnvelopeSource` (`@aegis/envelope`): everything a reader of a store or pack can do;
 *   its `get` answers an `EnvelopeRead`, so `(d) => source.get(d)` is an `EnvelopeLookup`.
 *
 * They live in format, below both `@aegis/envelope` and `@aegis/policy`, so that the store
 * and recheck agree on one definition without depending on each other.
 */

/** What the writer needs of an Envelope: a store that hashes what it is given (SPEC §9). */
export interface EnvelopeSink {
  /** Keep a call's verbatim request bytes durably; resolves with the digest the store computed. */
  putRequest(bytes: Uint8Array): Promise<RequestDigest>;
  /** Keep a call's verbatim response bytes durably; resolves with the digest the store computed. */
  putResponse(bytes: Uint8Array): Promise<ResponseDigest>;
}

/**
 * What reading a digest answers (SPEC §14.1, §16.3). `present` bytes were re-hashed by the
 * store; a reader that must not trust the store hashes them again (recheck does).
 */
export type EnvelopeRead<D extends string = string> =
  | { readonly code: "present"; readonly bytes: Uint8Array }
  | { readonly code: "missing" }
  | { readonly code: "digest_mismatch"; readonly expected: D; readonly found: string }
  | { readonly code: "redacted"; readonly redactedAt: string; readonly reason: string };

/** The request bytes a recorded digest names, from wherever the caller keeps them. */
export type EnvelopeLookup = (digest: RequestDigest) => Promise<EnvelopeRead>;
