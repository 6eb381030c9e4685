import { unmatched } from "@aegis/format/internal";
import type { EnvelopeTally, ReferenceCheck } from "@aegis/envelope/internal";
import { match } from "ts-pattern";

// How the CLI shows what an Envelope holds for a record's digests; the check itself is
// @aegis/envelope's (checkRecordAgainst).

export function describeTally(t: EnvelopeTally): string {
  return `envelope: ${t.present} present, ${t.missing} missing, ${t.digest_mismatch} digest_mismatch, ${t.redacted} redacted (of ${t.digests} digests the record names)`;
}

/** One line per digest: where the record names it, and what the Envelope holds. */
export function describeCheck({ reference: r, read }: ReferenceCheck): string {
  const where = `call ${r.callId ?? "-"} session ${r.sessionIndex} seq ${r.seq ?? "-"} ${r.part} ${r.digest}`;
  const what = match(read)
    .with({ code: "present" }, (x) => `present (${x.bytes.length} bytes)`)
    .with({ code: "missing" }, () => "missing")
    .with({ code: "digest_mismatch" }, (x) => `digest_mismatch found=${x.found}`)
    .with({ code: "redacted" }, (x) => `redacted at ${x.redactedAt}: ${x.reason}`)
    .exhaustive(unmatched);
  return `${where}: ${what}`;
}

/** The JSON form of one check: never the bytes themselves. */
export function checkJson({ reference: r, read }: ReferenceCheck): Record<string, unknown> {
  const answer = match(read)
    .with({ code: "present" }, (x) => ({ status: "present", size: x.bytes.length }))
    .with({ code: "missing" }, () => ({ status: "missing" }))
    .with({ code: "digest_mismatch" }, (x) => ({ status: "digest_mismatch", found: x.found }))
    .with({ code: "redacted" }, (x) => ({ status: "redacted", redacted_at: x.redactedAt, reason: x.reason }))
    .exhaustive(unmatched);
  return { call_id: r.callId ?? null, session_index: r.sessionIndex, seq: r.seq ?? null, line: r.line, part: r.part, digest: r.digest, ...answer };
}
