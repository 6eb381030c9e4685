import { unmatched } from "@aegis/format/internal";
import type { EnvelopeRead, EnvelopeSource } from "@aegis/envelope";
import { match } from "ts-pattern";
import { digestReferences, type DigestReference } from "./references.js";

/** What the Envelope answered for one digest the record names. */
export interface ReferenceCheck {
  readonly reference: DigestReference;
  readonly read: EnvelopeRead;
}

export interface EnvelopeTally {
  readonly digests: number;
  readonly present: number;
  readonly missing: number;
  readonly digest_mismatch: number;
  readonly redacted: number;
}

/**
 * Ask the Envelope for every digest the record names, in file order (SPEC §9, §14.1), and
 * count the answers. `onCheck` sees each one; the bytes are not kept.
 */
export async function checkRecordAgainst(
  record: string,
  source: EnvelopeSource,
  onCheck?: (check: ReferenceCheck) => Promise<void> | void,
): Promise<EnvelopeTally> {
  const tally = { digests: 0, present: 0, missing: 0, digest_mismatch: 0, redacted: 0 };
  for await (const reference of digestReferences(record)) {
    const read = await source.get(reference.digest);
    tally.digests++;
    match(read)
      .with({ code: "present" }, () => tally.present++)
      .with({ code: "missing" }, () => tally.missing++)
      .with({ code: "digest_mismatch" }, () => tally.digest_mismatch++)
      .with({ code: "redacted" }, () => tally.redacted++)
      // Never the default handler: it would print the answer, bytes and all.
      .exhaustive(unmatched);
    await onCheck?.({ reference, read });
  }
  return tally;
}

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
