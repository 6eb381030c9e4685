import { type RequestDigest, type ResponseDigest, type ToolSpecDigest, type JsonObject } from "@aegis/format";
import { tryParseDigest, readRecord } from "@aegis/format/internal";

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
