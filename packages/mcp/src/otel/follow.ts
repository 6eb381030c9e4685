import { type JsonObject } from "@aegis/format";
import { readTypedLine, type OutcomeLine } from "@aegis/format/internal";

/**
 * A record's Lines, in file order, as the calls and Sessions a span is made of (SPEC
 * Appendix A): one reading for `aegis export` (the verifier's walk of a file) and for
 * `aegis wrap --otlp` (each Line as the writer appends it), so both give the same spans.
 * It judges nothing: the verifier has, or the writer wrote the Line itself.
 */

/** A Line as a reader hands it over. */
export interface FollowedLine {
  /** The parsed Line, every member. */
  readonly value: JsonObject;
  /** Its `line_hash` (SPEC §4). */
  readonly lineHash: string;
  /** Its Session's index in the file, when the reader knows it: a file's reader does, a writer appending to it does not. */
  readonly sessionIndex?: number;
}

/** Where a Line is, and when the writer says it wrote it (SPEC §13.7), in milliseconds since the epoch. */
export interface LinePoint {
  readonly seq: number;
  readonly lineHash: string;
  readonly timeMs: number | undefined;
}

/** The Session a call belongs to, as its span names it. */
interface SessionRef {
  readonly index: number | undefined;
  /** The `open` Line's hash: the Session's name, wherever the file is. */
  readonly openLineHash: string;
  /** The `key_id` of the Session's key. */
  readonly keyId: string | undefined;
}

/** A Session, once it ended: closed, followed by another, or the file ended. */
export interface SessionRecord extends SessionRef {
  readonly publicKey: string | undefined;
  readonly open: LinePoint;
  /** The `close` Line, when the Session has one. */
  readonly close: LinePoint | undefined;
  /** When its last Line was written: the end of a Session with no `close`. */
  readonly lastTimeMs: number | undefined;
  readonly calls: number;
}

/** A call: its intent and, unless the Session ended without one, its outcome. */
export interface CallRecord {
  readonly session: SessionRef;
  readonly callId: string;
  readonly toolId: string;
  readonly requestDigest: string;
  readonly intent: LinePoint | undefined;
  readonly outcome: { readonly point: LinePoint; readonly line: OutcomeLine } | undefined;
  /**
   * How it ended: `outcome`; `unfinished`, its Session ended without one (SPEC §13.4); or
   * `in_flight`, the record ends in its Session, which has no `close`.
   */
  readonly ending: "outcome" | "unfinished" | "in_flight";
  /** For a call with no outcome: when its Session's last Line was written. */
  readonly lastTimeMs: number | undefined;
}

/** Where the follower hands what it has read. */
export interface FollowerSink {
  call(call: CallRecord): void;
  session(session: SessionRecord): void;
}

interface Pending {
  readonly callId: string;
  readonly toolId: string;
  readonly requestDigest: string;
  readonly intent: LinePoint;
}

interface OpenSession {
  readonly ref: SessionRef;
  readonly publicKey: string | undefined;
  readonly open: LinePoint;
  lastTimeMs: number | undefined;
  calls: number;
  readonly pending: Map<string, Pending>;
}

/** Reads Lines in file order and hands over each call as it ends, and each Session. */
export class RecordFollower {
  private session: OpenSession | undefined;

  constructor(private readonly sink: FollowerSink) {}

  /** Take the next Line. A Line that does not read as its type is passed over (the verifier judged the file). */
  line(line: FollowedLine): void {
    const typed = readTypedLine(line.value);
    if (!typed.ok) return;
    const read = typed.value;
    const point: LinePoint = { seq: numberOf(line.value["seq"]), lineHash: line.lineHash, timeMs: timeOf(line.value["time"]) };
    if (read.line_type === "open") {
      this.endSession("unfinished", undefined);
      this.session = {
        ref: { index: line.sessionIndex, openLineHash: line.lineHash, keyId: read.line.key_id },
        publicKey: read.line.public_key,
        open: point,
        lastTimeMs: point.timeMs,
        calls: 0,
        pending: new Map(),
      };
      return;
    }
    const session = this.session;
    if (session === undefined) return;
    if (point.timeMs !== undefined) session.lastTimeMs = point.timeMs;
    if (read.line_type === "intent") {
      const { call_id, tool_id, request_digest } = read.line;
      session.pending.set(call_id, { callId: call_id, toolId: tool_id, requestDigest: request_digest, intent: point });
    } else if (read.line_type === "outcome") {
      const outcome = read.line;
      const pending = session.pending.get(outcome.call_id);
      session.pending.delete(outcome.call_id);
      session.calls += 1;
      this.sink.call({
        session: session.ref,
        callId: outcome.call_id,
        toolId: outcome.tool_id,
        requestDigest: outcome.request_digest,
        intent: pending?.intent,
        outcome: { point, line: outcome },
        ending: "outcome",
        lastTimeMs: undefined,
      });
    } else if (read.line_type === "close") {
      this.endSession("unfinished", point);
    }
  }

  /** The record ends here: a Session without a `close` ends with it, its calls still in flight. */
  end(): void {
    this.endSession("in_flight", undefined);
  }

  private endSession(ending: "unfinished" | "in_flight", close: LinePoint | undefined): void {
    const session = this.session;
    if (session === undefined) return;
    this.session = undefined;
    for (const pending of session.pending.values()) {
      session.calls += 1;
      this.sink.call({
        session: session.ref,
        callId: pending.callId,
        toolId: pending.toolId,
        requestDigest: pending.requestDigest,
        intent: pending.intent,
        outcome: undefined,
        ending,
        lastTimeMs: session.lastTimeMs,
      });
    }
    this.sink.session({
      ...session.ref,
      publicKey: session.publicKey,
      open: session.open,
      close,
      lastTimeMs: session.lastTimeMs,
      calls: session.calls,
    });
  }
}

function numberOf(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

/** A Line's `time` (SPEC §13.7) in milliseconds since the epoch; undefined when it has none. */
function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}
