import { unmatched, JsonSyntaxError, decodeUtf8, parseJson, sameDigest } from "@aegis/format/internal";
import { type JsonValue, RequestDigest, type EnvelopeLookup } from "@aegis/format";
import { match } from "ts-pattern";
import type { RecheckIndeterminate } from "./recheck-verdict.js";

export type RequestRead = { readonly ok: true; readonly document: JsonValue | undefined } | { readonly ok: false; readonly reason: RecheckIndeterminate };

/**
 * Fetch and authenticate a call's request (SPEC §16.3). The bytes are hashed here, whatever
 * the Envelope says: an Envelope is unsigned, and only the Chain's `request_digest` is.
 */
export async function readRequest(digest: RequestDigest, lookup: EnvelopeLookup | undefined): Promise<RequestRead> {
  if (lookup === undefined) {
    return { ok: false, reason: { code: "missing_envelope", request_digest: digest, detail: { code: "no_lookup" } } };
  }
  const read = await lookup(digest);
  return match(read)
    .with({ code: "present" }, (r): RequestRead => {
      const found = RequestDigest.of(r.bytes);
      if (!sameDigest(found, digest)) return { ok: false, reason: { code: "envelope_digest_mismatch", expected: digest, found } };
      return { ok: true, document: parseRequestJson(r.bytes) };
    })
    .with({ code: "missing" }, (): RequestRead => ({
      ok: false,
      reason: { code: "missing_envelope", request_digest: digest, detail: { code: "missing" } },
    }))
    .with({ code: "digest_mismatch" }, (r): RequestRead => ({
      ok: false,
      reason: { code: "envelope_digest_mismatch", expected: digest, found: r.found },
    }))
    .with({ code: "redacted" }, (r): RequestRead => ({
      ok: false,
      reason: { code: "missing_envelope", request_digest: digest, detail: { code: "redacted", redacted_at: r.redactedAt, reason: r.reason } },
    }))
    .exhaustive(unmatched);
}

/** The request as JSON, read by the Chain's own strict reader; undefined when it is not JSON. */
export function parseRequestJson(bytes: Uint8Array): JsonValue | undefined {
  const text = decodeUtf8(bytes);
  if (text === undefined) return undefined;
  try {
    return parseJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return undefined;
    throw error;
  }
}
