import { unmatched } from "@aegis/format/internal";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import { RecordWriter, type Appended, type SigningKey } from "@aegis/format";
import { EnvelopeStore } from "@aegis/envelope";
import type { Bindings, PolicySet } from "@aegis/policy";
import { match } from "ts-pattern";
import { gateFor } from "./gate.js";
import type { Notice } from "./notice.js";
import type { ParkAnswer, ParkRefusal } from "./parks.js";
import type { FrameVerdict } from "./frame-verdict.js";
import { McpRecorder } from "./recorder.js";
import type { RefusalStyle } from "./refusal.js";

/**
 * The options of {@link recordingTransport}, which is `aegis wrap` inside a TypeScript agent
 * (SPEC §17.8): a Transport for the MCP SDK's `Client` that records, and with a Policy Set
 * enforces, every `tools/call` the client sends through the transport it wraps (stdio,
 * streamable HTTP, in-memory: any).
 */
export interface RecordingOptions {
  /** The record file; a new Session is appended and closed with the transport. */
  readonly audit: string;
  /** The key that signs every Line of the Session. */
  readonly key: SigningKey;
  /** An Envelope store directory for the bytes of each message and tool definition. */
  readonly envelope?: string;
  /** A Policy Set to enforce (SPEC §17.3): a call it does not allow is answered with a refusal and never sent. */
  readonly policy?: PolicySet;
  /** Where each tool's path or URL lies in its request, for the axes `policy` decides on (SPEC §17.4). */
  readonly bindings?: Bindings;
  /** `decision_axes.role` of every call under `policy`: the role the agent runs as. */
  readonly role?: string;
  /** `decision_axes.session` of every call under `policy`: the set's session scope, not the record's Session. */
  readonly session?: string;
  /**
   * Resolve bound paths on this host, symbolic links followed (default true); false resolves
   * them lexically, for a server that runs elsewhere (SPEC §17.4).
   */
  readonly followSymlinks?: boolean;
  /** Told what wrap would print on its stderr (parks, changed tools, failures). */
  readonly onNotice?: (notice: Notice) => void;
  /**
   * How a refused `tools/call` is answered (SPEC §17.3): `tool-result` (default), a result
   * with `isError` that `callTool` returns; `reference`, the Rust reference's JSON-RPC error,
   * which the SDK's `callTool` throws.
   */
  readonly refusal?: RefusalStyle;
}

/**
 * Wrap an MCP SDK client transport so that every `tools/call` through it is recorded, and
 * with a Policy Set decided first (SPEC §17.8). The record (and the Envelope) are opened
 * before this resolves; closing the returned transport closes the Session.
 *
 * @example
 * ```ts
 * const transport = await recordingTransport(new StdioClientTransport({ command: "npx", args: ["@modelcontextprotocol/server-filesystem", "/srv"] }), { audit: "session.aarl", key: await readKeyFile("signing.key") });
 * await client.connect(transport);
 * ```
 *
 * @throws RecordWriterError (from `@aegis/format`) when the record cannot be opened for
 * writing, and EnvelopeError (from `@aegis/envelope`) when the Envelope store cannot.
 */
export async function recordingTransport(inner: Transport, options: RecordingOptions): Promise<RecordingTransport> {
  const envelope = options.envelope === undefined ? undefined : await EnvelopeStore.open(options.envelope);
  let writer: RecordWriter;
  try {
    writer = await RecordWriter.open(options.audit, { key: options.key, ...(envelope === undefined ? {} : { envelope }) });
  } catch (error) {
    await envelope?.close().catch(() => undefined);
    throw error;
  }
  const gate = gateFor(options);
  const recorder = new McpRecorder({
    writer,
    ...(gate === undefined ? {} : { gate }),
    ...(envelope === undefined ? {} : { toolSpecs: envelope }),
    ...(options.onNotice === undefined ? {} : { onNotice: options.onNotice }),
    ...(options.refusal === undefined ? {} : { refusal: options.refusal }),
  });
  return new RecordingClientTransport(inner, recorder, async () => {
    await writer.close();
    await envelope?.close();
  });
}

/**
 * The bytes of a message are its JSON text as `JSON.stringify` writes it: what the SDK's
 * stdio transport writes for a request, and the SDK's reading of a response written back.
 * Undefined when it cannot be written at all (a cycle, a BigInt).
 */
function bytesOf(message: JSONRPCMessage): Buffer | undefined {
  try {
    return Buffer.from(JSON.stringify(message), "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The message the bytes say, read again: what is sent on is what was decided and recorded,
 * never the caller's object, whose getters or `toJSON` could write something else the
 * second time it is written (SPEC §17.8).
 */
function reread(bytes: Buffer): JSONRPCMessage {
  return JSON.parse(bytes.toString("utf8")) as JSONRPCMessage;
}

/**
 * An MCP SDK client transport that records every `tools/call` it carries (SPEC §17), made by
 * {@link recordingTransport}. `close()` closes the inner transport, then the Session.
 */
export interface RecordingTransport extends Transport {
  /** Answer a parked call: a signed `decision`, then one retry within its scope runs. */
  answerPark(
    approvalId: string,
    answer: ParkAnswer,
  ): Promise<{ readonly ok: true; readonly appended: Appended } | { readonly ok: false; readonly refusal: ParkRefusal }>;
}

class RecordingClientTransport implements RecordingTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** Messages in the order the client sent them: each goes out once its intents are durable. */
  private sending: Promise<void> = Promise.resolve();
  private ended: Promise<void> | undefined;

  constructor(
    private readonly inner: Transport,
    private readonly recorder: McpRecorder,
    private readonly release: () => Promise<void>,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      const bytes = bytesOf(message);
      // Only an answer the record can name reaches the client, and the client gets the
      // message as recorded (SPEC §17.2, §17.8).
      if (bytes !== undefined) this.recorder.observe(bytes, () => this.onmessage?.(reread(bytes), extra));
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => void this.end().then(() => this.onclose?.());
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const bytes = bytesOf(message);
    if (bytes === undefined) return Promise.reject(new TypeError("the message cannot be written as JSON, so it was neither recorded nor sent"));
    const verdict = this.recorder.admit(bytes);
    const sent = this.sending.then(() => verdict).then((v) => this.act(v, bytes, message, options));
    this.sending = sent.catch(() => undefined);
    return sent;
  }

  private async act(verdict: FrameVerdict, bytes: Buffer, message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    await match(verdict)
      .with({ code: "forward" }, () => this.inner.send(reread(bytes), options))
      .with({ code: "answer" }, (v) => this.answer(v.frame, message))
      .with({ code: "drop" }, () => Promise.resolve())
      .with({ code: "failed" }, async (v) => {
        if (v.frame !== undefined) await this.answer(v.frame, message);
        this.onerror?.(v.error);
      })
      .exhaustive(unmatched);
  }

  /**
   * The refusal goes to the client as an answer would, after this send resolves. A refusal
   * of a frame that was not read names no id (SPEC §17.1); in process the message's own id
   * is at hand, and is given, so that the caller's request fails instead of waiting forever.
   */
  private answer(frame: Buffer, sent: JSONRPCMessage): Promise<void> {
    const answer = JSON.parse(frame.toString("utf8")) as JSONRPCMessage | JSONRPCMessage[];
    const id = "id" in sent && (typeof sent.id === "string" || Number.isSafeInteger(sent.id)) ? sent.id : undefined;
    queueMicrotask(() => {
      for (const m of Array.isArray(answer) ? answer : [answer]) {
        this.onmessage?.(id !== undefined && "id" in m && m.id === null ? { ...m, id } : m);
      }
    });
    return Promise.resolve();
  }

  /** Answer a parked call: a signed `decision`, then one retry within its scope runs. */
  answerPark(
    approvalId: string,
    answer: ParkAnswer,
  ): Promise<{ readonly ok: true; readonly appended: Appended } | { readonly ok: false; readonly refusal: ParkRefusal }> {
    return this.recorder.answerPark(approvalId, answer);
  }

  /** Close the server's transport; every call in flight gets its outcome, and the Session its `close`. */
  async close(): Promise<void> {
    await this.sending;
    await this.inner.close();
    await this.end();
  }

  private end(): Promise<void> {
    this.ended ??= this.recorder.finish({ code: "transport_closed" }).then(() => this.release());
    return this.ended;
  }
}
