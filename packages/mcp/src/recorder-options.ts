import type { RecordWriter, ToolSpecDigest } from "@aegis/format";
import type { Gate } from "./gate.js";
import type { JsonRecord } from "./message.js";
import type { Notice } from "./notice.js";
import type { Governance } from "./outcomes.js";
import type { ToolSpecSink } from "./pins.js";
import type { RefusalStyle } from "./refusal.js";

export interface RecorderOptions {
  /** The record. The recorder writes through it and never closes it. */
  readonly writer: RecordWriter;
  /** Enforcement: without it, every call is relayed and recorded (the pass-through). */
  readonly gate?: Gate;
  /** Where tool definitions are kept: give the Envelope the writer keeps bytes in. */
  readonly toolSpecs?: ToolSpecSink;
  /** Milliseconds, for `wall_ms`. Default `performance.now()`. */
  readonly clock?: () => number;
  readonly onNotice?: (notice: Notice) => void;
  /** The control socket's path, named in a park's notice. */
  readonly control?: string;
  /** How a refused `tools/call` is answered (SPEC §17.3): default `tool-result`. */
  readonly refusal?: RefusalStyle;
  /** Where `call_id`s come from: one counter for every relay writing the same Session. */
  readonly callIds?: CallIds;
}

/** `call-<n>`, counting from 1 in each Session (SPEC §17.2), whichever relay records the call. */
export class CallIds {
  private next = 1;

  mint(): string {
    return `call-${this.next++}`;
  }
}

/** A call relayed to the server and not yet answered. */
export interface PendingCall {
  readonly callId: string;
  readonly toolId: string;
  readonly governance: Governance;
  readonly toolSpec: ToolSpecDigest | undefined;
  /** The request, read: a round that asks for input is continued by a call repeating its arguments. */
  readonly request: JsonRecord;
  /** The round this call continues (SPEC §17.2), when it is one. */
  readonly continues: string | undefined;
  startedAt: number;
  cancelled: boolean;
}
