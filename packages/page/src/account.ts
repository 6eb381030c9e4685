import { readRecordBytes, type Position } from "@aegis/format/browser";
import { entriesOf, type Entry } from "@aegis/cli/browser";

/**
 * What the page tells of a record: its entries as `aegis show` reads them (Sessions, calls
 * with their intent and outcome joined, decisions, closes), and the links between Lines far
 * apart (the call that parked an approval, the decision that answered it).
 */
export interface Account {
  readonly entries: readonly Entry[];
  /** Approval id to the call whose outcome parked it. */
  readonly parkedBy: ReadonlyMap<string, CallEntry>;
  /** Approval id to the decision that answered it (the first: a second is Tampered). */
  readonly decidedBy: ReadonlyMap<string, DecisionEntry>;
  readonly tools: readonly string[];
  readonly sessions: readonly SessionEntry[];
  /** The index in `entries` of the entry holding the row with this number. */
  entryOfLine(line: number): number | undefined;
  /** The index in `entries` of the entry holding the Line at this position. */
  entryAt(at: Position): number | undefined;
}

export type CallEntry = Extract<Entry, { kind: "call" }>;
type DecisionEntry = Extract<Entry, { kind: "decision" }>;
export type SessionEntry = Extract<Entry, { kind: "session" }>;

/** Read every row of `bytes`; rows from `breakLine` on are marked as not vouched for. */
export async function readAccount(bytes: Uint8Array, breakLine: number | undefined): Promise<Account> {
  const entries: Entry[] = [];
  const byLine = new Map<number, number>();
  const byPosition = new Map<string, number>();
  const parkedBy = new Map<string, CallEntry>();
  const decidedBy = new Map<string, DecisionEntry>();
  const tools = new Set<string>();
  const sessions: SessionEntry[] = [];
  const key = (at: Position): string => `${at.session_index}/${at.seq}`;
  const note = (index: number, line: number, at: Position | undefined): void => {
    byLine.set(line, index);
    if (at !== undefined && !byPosition.has(key(at))) byPosition.set(key(at), index);
  };
  for await (const entry of entriesOf(readRecordBytes(bytes, { canonical: true }), breakLine)) {
    const index = entries.length;
    entries.push(entry);
    switch (entry.kind) {
      case "session":
        sessions.push(entry);
        note(index, entry.line, { session_index: entry.session_index, seq: 0 });
        break;
      case "call": {
        tools.add(entry.tool_id);
        if (entry.intent !== undefined) note(index, entry.intent.line, entry.intent.at);
        if (entry.outcome !== undefined) note(index, entry.outcome.line, entry.outcome.at);
        const policy = entry.outcome?.record.policy;
        if (policy?.status === "pending_approval") parkedBy.set(policy.approval_id, entry);
        break;
      }
      case "decision":
        if (!decidedBy.has(entry.record.approval_id)) decidedBy.set(entry.record.approval_id, entry);
        note(index, entry.line, entry.at);
        break;
      case "close":
      case "other":
        note(index, entry.line, entry.at);
        break;
      case "unreadable":
        note(index, entry.line, undefined);
        break;
    }
  }
  return {
    entries,
    parkedBy,
    decidedBy,
    tools: [...tools].sort(),
    sessions,
    entryOfLine: (line) => byLine.get(line),
    entryAt: (at) => byPosition.get(key(at)),
  };
}
