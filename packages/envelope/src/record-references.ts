import type { JsonObject, RequestDigest, ResponseDigest, ToolSpecDigest } from "@aegis/format";
import { readRecord, tryParseDigest, unmatched, type ExitCode } from "@aegis/format/internal";
import { match } from "ts-pattern";
import type { EnvelopeRead, EnvelopeSource } from "./source.js";

// Which Envelope bytes a record names, and what a store or pack holds for each (SPEC §9,
// §14.1): `aegis envelope verify`, `verify --envelope`, `report`, `envelope pack` and the
// envelope vectors all ask through here.

/** One place a record names Envelope bytes (SPEC §9). */
export interface DigestReference {
  readonly digest: RequestDigest | ResponseDigest | ToolSpecDigest;
  /** `tool_spec`: the definition an outcome's `tool_spec_digest` names (SPEC §17.6). */
  readonly part: "request" | "response" | "tool_spec";
  readonly callId: string | undefined;
  readonly sessionIndex: number;
  readonly seq: number | undefined;
  /** 1-based row number in the file. */
  readonly line: number;
}

/**
 * Every request and response digest a record names, in file order, each call's request
 * once (its intent and outcome name the same bytes), and each tool definition the first
 * time an outcome names it. Rows are read as they are, whatever
 * the chain's verdict, because an operator asks about the bytes of every call the file
 * shows; the verdict is `aegis verify`'s to give. Memory is bounded by the calls in flight.
 */
export async function* digestReferences(path: string): AsyncGenerator<DigestReference> {
  const announced = new Map<string, string>();
  // Tool definitions repeat across calls: each is asked for once. Bounded by the tools listed.
  const specs = new Set<string>();
  for await (const row of readRecord(path, { canonical: true })) {
    if (row.code !== "object") continue;
    const line = row.value;
    const type = row.lineType;
    if (type === "open") {
      announced.clear();
      continue;
    }
    if (type !== "intent" && type !== "outcome") continue;
    const callId = typeof line["call_id"] === "string" ? line["call_id"] : undefined;
    const at = { callId, sessionIndex: row.sessionIndex, seq: row.seq, line: row.row };
    const request = digestMember(line, "request_digest", "RequestDigest");
    if (request !== undefined) {
      const key = callId ?? `line ${row.row}`;
      if (type === "intent") {
        announced.set(key, request);
        yield { digest: request, part: "request", ...at };
      } else if (announced.get(key) !== request) {
        yield { digest: request, part: "request", ...at };
      }
      if (type === "outcome") announced.delete(key);
    }
    if (type === "outcome") {
      const response = digestMember(line, "response_digest", "ResponseDigest");
      if (response !== undefined) yield { digest: response, part: "response", ...at };
      const spec = digestMember(line, "tool_spec_digest", "ToolSpecDigest");
      if (spec !== undefined && !specs.has(spec)) {
        specs.add(spec);
        yield { digest: spec, part: "tool_spec", ...at };
      }
    }
  }
}

function digestMember<K extends "RequestDigest" | "ResponseDigest" | "ToolSpecDigest">(line: JsonObject, member: string, kind: K) {
  const text = line[member];
  if (typeof text !== "string") return undefined;
  const parsed = tryParseDigest(kind, text);
  return parsed.ok ? parsed.digest : undefined;
}

/** What the Envelope answered for one digest the record names. */
export interface ReferenceCheck {
  readonly reference: DigestReference;
  readonly read: EnvelopeRead;
}

/** How many of the digests a record names an Envelope holds, and how it holds the rest. */
export interface EnvelopeTally {
  readonly digests: number;
  readonly present: number;
  readonly missing: number;
  readonly digest_mismatch: number;
  readonly redacted: number;
}

/**
 * `aegis envelope verify`'s exit code (SPEC §14): 1 when the Envelope holds bytes that do not
 * hash to the digest naming them, else 2 when damage lost entries, else 0.
 */
export function exitCodeOfEnvelopeCheck(found: { readonly mismatched: number; readonly lost: number }): ExitCode {
  return found.mismatched > 0 ? 1 : found.lost > 0 ? 2 : 0;
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
