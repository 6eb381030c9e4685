/**
 * `@aegis/mcp/v2`: {@link recordingTransport} typed for the v2 MCP SDK
 * (`@modelcontextprotocol/client` 2.x), whose `Transport` and message types are its own.
 * It is the same transport as `@aegis/mcp`'s, which records the messages of either SDK
 * (SPEC §17.8); this entry only names the v2 types, so that an agent built on the v2 SDK
 * alone needs no v1 types.
 *
 * @packageDocumentation
 */
import type { Transport } from "@modelcontextprotocol/client";
import type { Appended } from "@aegis/format";
import type { ParkAnswer, ParkRefusal } from "./parks.js";
import { recordingTransport as recording, type RecordingOptions } from "./transport.js";

/** A v2 SDK client transport that records every `tools/call` it carries (SPEC §17.8). `close()` closes the inner transport, then the Session. */
export interface RecordingTransport extends Transport {
  /** Answer a parked call: a signed `decision`, then one retry within its scope runs. */
  answerPark(
    approvalId: string,
    answer: ParkAnswer,
  ): Promise<{ readonly ok: true; readonly appended: Appended } | { readonly ok: false; readonly refusal: ParkRefusal }>;
}

/**
 * Wrap a v2 SDK client transport (`StdioClientTransport`, `StreamableHTTPClientTransport`)
 * so that every `tools/call` through it is recorded, and with a Policy Set decided first
 * (SPEC §17.8). The record (and the Envelope) are opened before this resolves; closing the
 * returned transport closes the Session.
 *
 * @example
 * ```ts
 * const transport = await recordingTransport(new StdioClientTransport({ command: "npx", args: ["my-server"] }), { audit: "session.aarl", key });
 * await new Client({ name: "agent", version: "1.0.0" }).connect(transport);
 * ```
 *
 * @throws RecordWriterError (from `@aegis/format`) when the record cannot be opened for
 * writing, and EnvelopeError (from `@aegis/envelope`) when the Envelope store cannot.
 */
export function recordingTransport(inner: Transport, options: RecordingOptions): Promise<RecordingTransport> {
  return recording(inner, options);
}

export type { RecordingOptions } from "./transport.js";
