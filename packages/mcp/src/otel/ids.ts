import { createHash } from "node:crypto";

/**
 * Trace and span ids derived from the record (SPEC Appendix A.2): exporting a record twice, or
 * exporting live and then from the file, gives the same ids, because each is a hash of a Line
 * the record holds. A label per kind keeps a Session's span id from ever being a call's.
 */

/** A span by its W3C Trace Context ids: 32 and 16 lowercase hex. */
export interface SpanRef {
  readonly traceId: string;
  readonly spanId: string;
}

const TRACE_LABEL = "aegis otel trace v1\n";
const SESSION_SPAN_LABEL = "aegis otel session span v1\n";
const CALL_SPAN_LABEL = "aegis otel call span v1\n";

/** The trace of a Session's own spans: from its `open` Line's hash. */
export function sessionTraceId(openLineHash: string): string {
  return derive(TRACE_LABEL, openLineHash, 16);
}

/** The Session's span, the parent of its calls' spans: from its `open` Line's hash. */
export function sessionSpanId(openLineHash: string): string {
  return derive(SESSION_SPAN_LABEL, openLineHash, 8);
}

/** A call's span: from its `intent` Line's hash (its `outcome`'s when the record holds no intent). */
export function callSpanId(lineHash: string): string {
  return derive(CALL_SPAN_LABEL, lineHash, 8);
}

/** The first `bytes` bytes of SHA-256(label || hash), as hex; never all zeros, which W3C Trace Context calls invalid. */
function derive(label: string, hash: string, bytes: number): string {
  const hex = createHash("sha256")
    .update(label + hash, "utf8")
    .digest("hex")
    .slice(0, bytes * 2);
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

const HEX = /^[0-9a-f]+$/;

/**
 * The parent a W3C `traceparent` names (Trace Context Level 1, §3.2), or undefined when the
 * value is not one: a version other than `ff` in two lowercase hex digits, a 32-hex trace id
 * and a 16-hex parent id, neither all zeros, two hex digits of flags; version `00` is exactly
 * that, and a later version may carry more after a `-`.
 */
export function parseTraceparent(value: unknown): SpanRef | undefined {
  if (typeof value !== "string" || value.length < 55) return undefined;
  const version = value.slice(0, 2);
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return undefined;
  if (!HEX.test(version) || version === "ff" || !HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  if (version === "00" ? value.length !== 55 : value.length > 55 && value[55] !== "-") return undefined;
  return { traceId, spanId };
}
