import { readRecord, readTypedLine, type DecisionLine, type IntentLine, type OutcomeLine, type Position, type RecordRow } from "@aegis/format";

/** One thing `show` reports, in file order. */
export type Entry =
  | {
      readonly kind: "session";
      readonly session_index: number;
      readonly line: number;
      readonly public_key: string;
      readonly prev_session_tail?: string;
      readonly after_break: boolean;
    }
  | {
      readonly kind: "call";
      readonly call_id: string;
      readonly tool_id: string;
      readonly intent?: { readonly at: Position; readonly line: number };
      readonly outcome?: { readonly at: Position; readonly line: number; readonly record: OutcomeLine };
      readonly request_digest: string;
      readonly after_break: boolean;
    }
  | { readonly kind: "decision"; readonly at: Position; readonly line: number; readonly record: DecisionLine; readonly after_break: boolean }
  | { readonly kind: "close"; readonly at: Position; readonly line: number; readonly after_break: boolean }
  | {
      readonly kind: "other";
      readonly line_type: string;
      readonly at: Position;
      readonly line: number;
      readonly after_break: boolean;
      readonly problems: readonly string[];
    }
  | { readonly kind: "unreadable"; readonly line: number; readonly detail: string };

/**
 * Read the file again and yield entries in file order. An intent waits for its outcome
 * (calls in flight are the only thing held), so memory stays bounded. Entries from row
 * `breakLine` on, where verification stopped, are marked `after_break`: nothing there is
 * vouched for.
 */
export async function* entries(path: string, breakLine: number | undefined): AsyncGenerator<Entry> {
  const afterBreak = (line: number): boolean => breakLine !== undefined && line >= breakLine;
  let pending = new Map<string, { readonly line: IntentLine; readonly at: Position; readonly row: number }>();

  function* flushPending(): Generator<Entry> {
    for (const p of pending.values()) {
      yield {
        kind: "call",
        call_id: p.line.call_id,
        tool_id: p.line.tool_id,
        intent: { at: p.at, line: p.row },
        request_digest: p.line.request_digest,
        after_break: afterBreak(p.row),
      };
    }
    pending = new Map();
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
          after_break,
        };
        return;
      case "intent":
        pending.set(t.line.call_id, { line: t.line, at, row: row.row });
        return;
      case "outcome": {
        const intent = pending.get(t.line.call_id);
        pending.delete(t.line.call_id);
        yield {
          kind: "call",
          call_id: t.line.call_id,
          tool_id: t.line.tool_id,
          ...(intent === undefined ? {} : { intent: { at: intent.at, line: intent.row } }),
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
        yield { kind: "close", at, line: row.row, after_break };
        return;
      case "checkpoint":
        yield { kind: "other", line_type: "checkpoint", at, line: row.row, after_break, problems: [] };
        return;
      case "unknown":
        yield { kind: "other", line_type: t.token, at, line: row.row, after_break, problems: [] };
        return;
    }
  }

  for await (const row of readRecord(path, { canonical: true })) yield* handle(row);
  yield* flushPending();
}
