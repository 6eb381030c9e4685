import {
  detachedString,
  readTypedLine,
  type Confinement,
  type DecisionLine,
  type IntentLine,
  type OutcomeLine,
  type Position,
  type RecordRow,
} from "@aegis/format/browser";

/** One thing `show` reports, in file order. */
export type Entry =
  | {
      readonly kind: "session";
      readonly session_index: number;
      readonly line: number;
      readonly public_key: string;
      readonly prev_session_tail?: string;
      /** When the writer says it opened the Session (SPEC §13.7), when the Line says. */
      readonly time?: string;
      /** What the Session's server was confined to (SPEC §17.11), when it was. */
      readonly confinement?: Confinement;
      readonly after_break: boolean;
    }
  | {
      readonly kind: "call";
      readonly call_id: string;
      readonly tool_id: string;
      readonly intent?: { readonly at: Position; readonly line: number; readonly time?: string };
      readonly outcome?: { readonly at: Position; readonly line: number; readonly record: OutcomeLine };
      readonly request_digest: string;
      readonly after_break: boolean;
    }
  | { readonly kind: "decision"; readonly at: Position; readonly line: number; readonly record: DecisionLine; readonly after_break: boolean }
  | { readonly kind: "close"; readonly at: Position; readonly line: number; readonly time?: string; readonly after_break: boolean }
  | {
      readonly kind: "other";
      readonly line_type: string;
      readonly at: Position;
      readonly line: number;
      readonly after_break: boolean;
      readonly problems: readonly string[];
    }
  | { readonly kind: "unreadable"; readonly line: number; readonly detail: string };

/** What an intent leaves for its outcome's entry: copies, not slices of the row. */
interface Pending {
  readonly call_id: string;
  readonly tool_id: string;
  readonly request_digest: string;
  readonly at: Position;
  readonly row: number;
  readonly time: string | undefined;
}

function intentOf(p: Pending): { readonly at: Position; readonly line: number; readonly time?: string } {
  return { at: p.at, line: p.row, ...(p.time === undefined ? {} : { time: p.time }) };
}

/** The bounds on calls held waiting for their outcome (SPEC §18). */
const MAX_PENDING_CALLS = 100_000;
const MAX_PENDING_CHARS = 32 * 1024 * 1024;

/**
 * The entries of a record's rows, in file order. An intent waits for its outcome
 * (calls in flight are the only thing held), so memory stays bounded. Entries from row
 * `breakLine` on, where verification stopped, are marked `after_break`: nothing there is
 * vouched for.
 */
export async function* entriesOf(rows: AsyncIterable<RecordRow>, breakLine: number | undefined): AsyncGenerator<Entry> {
  const afterBreak = (line: number): boolean => breakLine !== undefined && line >= breakLine;
  let pending = new Map<string, Pending>();
  let pendingChars = 0;

  function inFlightEntry(p: Pending): Entry {
    return {
      kind: "call",
      call_id: p.call_id,
      tool_id: p.tool_id,
      intent: intentOf(p),
      request_digest: p.request_digest,
      after_break: afterBreak(p.row),
    };
  }

  function* flushPending(): Generator<Entry> {
    for (const p of pending.values()) yield inFlightEntry(p);
    pending = new Map();
    pendingChars = 0;
  }

  /**
   * Hold an intent until its outcome, within bounds: past them the oldest waiting call is
   * shown as in flight, and an outcome that comes later is shown on its own (issue 12: a
   * file of a million unanswered intents must not be held whole).
   */
  function* hold(line: IntentLine, at: Position, row: number): Generator<Entry> {
    const p: Pending = {
      call_id: detachedString(line.call_id),
      tool_id: detachedString(line.tool_id),
      request_digest: detachedString(line.request_digest),
      at,
      row,
      time: line.time === undefined ? undefined : detachedString(line.time),
    };
    const old = pending.get(p.call_id);
    if (old !== undefined) pendingChars -= old.call_id.length + old.tool_id.length;
    pending.set(p.call_id, p);
    pendingChars += p.call_id.length + p.tool_id.length;
    while (pending.size > MAX_PENDING_CALLS || pendingChars > MAX_PENDING_CHARS) {
      const [oldest] = pending.values();
      if (oldest === undefined) break;
      pending.delete(oldest.call_id);
      pendingChars -= oldest.call_id.length + oldest.tool_id.length;
      yield inFlightEntry(oldest);
    }
  }

  function* handle(row: RecordRow): Generator<Entry> {
    if (row.code === "too_long") {
      yield { kind: "unreadable", line: row.row, detail: "longer than the 1 MiB row bound" };
      return;
    }
    if (row.code === "unreadable") {
      yield { kind: "unreadable", line: row.row, detail: row.detail };
      return;
    }
    if (row.code === "not_an_object" || row.lineType === undefined) {
      yield { kind: "unreadable", line: row.row, detail: "not a Line: no line_type" };
      return;
    }
    const value = row.value;
    const after_break = afterBreak(row.row);
    if (row.lineType === "open") yield* flushPending();
    const at: Position = { session_index: row.sessionIndex, seq: row.seq ?? -1 };
    const typed = readTypedLine(value);
    if (!typed.ok) {
      yield { kind: "other", line_type: row.lineType, at, line: row.row, after_break, problems: typed.problems };
      return;
    }
    const t = typed.value;
    switch (t.line_type) {
      case "open":
        yield {
          kind: "session",
          session_index: row.sessionIndex,
          line: row.row,
          public_key: t.line.public_key,
          ...(t.line.prev_session_tail === undefined ? {} : { prev_session_tail: t.line.prev_session_tail }),
          ...(t.line.time === undefined ? {} : { time: t.line.time }),
          ...(t.line.confinement === undefined ? {} : { confinement: t.line.confinement }),
          after_break,
        };
        return;
      case "intent":
        yield* hold(t.line, at, row.row);
        return;
      case "outcome": {
        const intent = pending.get(t.line.call_id);
        if (intent !== undefined) {
          pending.delete(t.line.call_id);
          pendingChars -= intent.call_id.length + intent.tool_id.length;
        }
        yield {
          kind: "call",
          call_id: t.line.call_id,
          tool_id: t.line.tool_id,
          ...(intent === undefined ? {} : { intent: intentOf(intent) }),
          outcome: { at, line: row.row, record: t.line },
          request_digest: t.line.request_digest,
          after_break,
        };
        return;
      }
      case "decision":
        yield { kind: "decision", at, line: row.row, record: t.line, after_break };
        return;
      case "close":
        yield* flushPending();
        yield { kind: "close", at, line: row.row, ...(t.line.time === undefined ? {} : { time: t.line.time }), after_break };
        return;
      case "checkpoint":
        yield { kind: "other", line_type: "checkpoint", at, line: row.row, after_break, problems: [] };
        return;
      case "unknown":
        yield { kind: "other", line_type: t.token, at, line: row.row, after_break, problems: [] };
        return;
    }
  }

  for await (const row of rows) yield* handle(row);
  yield* flushPending();
}
