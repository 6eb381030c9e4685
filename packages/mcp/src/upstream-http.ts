import { Readable, Writable } from "node:stream";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { messageOf } from "@aegis/format/internal";
import { settlesWithin } from "./bounded.js";
import { boundedFetch, type ResponseBound } from "./bounded-fetch.js";
import { FrameSplitter, isBlankFrame } from "./frames.js";
import { idKeyOf, isRecord, isResponseShaped, type JsonRecord } from "./message.js";
import { FaultError } from "@aegis/format";

/**
 * A Streamable HTTP server as the relay's server side (SPEC §17.10): the MCP SDK's own client
 * transport (`@modelcontextprotocol/client`), not HTTP of aegis's, behind the two byte streams
 * the relay pumps, as a child process's stdin and stdout are.
 *
 * Into `serverIn` the relay writes the frames it admitted, each the bytes it recorded: on
 * this side those are a message's JSON text as `JSON.stringify` writes it, which is what the
 * transport posts, so the server is sent exactly the bytes the record names. Out of
 * `serverOut` come the server's messages, each written as `JSON.stringify` writes what the
 * transport read; the relay records those bytes and writes them to the client.
 */
export interface HttpUpstreamOptions {
  readonly url: URL;
  /** Request headers on every request: `--header`, and the secrets named by `--header-env`. */
  readonly headers: Readonly<Record<string, string>>;
  /** A failure of the connection, in words, for wrap's stderr. Never holds a header. */
  readonly onFailure: (detail: string) => void;
  /** The bound on each message the server sends, applied before it is buffered (SPEC §17.1). */
  readonly bound: ResponseBound;
}

/** Why the transport could not be made. */
export class UpstreamError extends FaultError<{ readonly detail: string }> {
  constructor(detail: string) {
    super("UpstreamError", { detail }, (f) => f.detail);
  }
}

const NEWLINE = Buffer.from("\n");
/** How long a server is given to answer the session's DELETE before wrap lets it go (SPEC §17.10). */
const DELETE_MS = 3000;

export class HttpUpstream {
  readonly serverIn: Writable;
  readonly serverOut: Readable;
  /** Requests sent and not yet answered, by id key: the input ends once they are. */
  private readonly inFlight = new Set<string>();
  /** `initialize` requests sent, by id key: their answer names the protocol version. */
  private readonly handshakes = new Set<string>();
  /** Messages wait for the handshake to be answered: its answer carries the session id. */
  private handshake: Promise<void> = Promise.resolve();
  private inputEnded = false;
  private closed = false;

  private constructor(
    private readonly transport: StreamableHTTPClientTransport,
    private readonly options: HttpUpstreamOptions,
  ) {
    const frames = new FrameSplitter();
    this.serverIn = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        for (const event of frames.push(chunk)) if (event.code === "frame" && !isBlankFrame(event.bytes)) this.send(event.bytes);
        done();
      },
      final: (done) => {
        this.inputEnded = true;
        this.closeWhenAnswered();
        done();
      },
    });
    this.serverOut = new Readable({ read: () => undefined });
    transport.onmessage = (message) => this.received(message as unknown as JsonRecord);
    transport.onclose = () => this.ended();
    // Failures of the stream the transport opens for the server's own messages are reported,
    // not fatal: a server may have none (405). A failed POST is fatal (below).
    transport.onerror = () => undefined;
  }

  /** Load the SDK's transport and start it. */
  static async open(options: HttpUpstreamOptions): Promise<HttpUpstream> {
    let sdk: typeof import("@modelcontextprotocol/client");
    try {
      sdk = await import("@modelcontextprotocol/client");
    } catch (error) {
      throw new UpstreamError(`aegis wrap --url needs @modelcontextprotocol/client 2.x (npm install @modelcontextprotocol/client): ${messageOf(error)}`);
    }
    const transport = new sdk.StreamableHTTPClientTransport(options.url, {
      requestInit: { headers: { ...options.headers } },
      fetch: boundedFetch(fetch, options.bound),
    });
    const upstream = new HttpUpstream(transport, options);
    await transport.start();
    return upstream;
  }

  /** Post one admitted frame. It reads: the relay admitted it, and the relay's bytes are JSON text. */
  private send(frame: Buffer): void {
    const message = JSON.parse(frame.toString("utf8")) as JsonRecord;
    const key = Object.hasOwn(message, "method") ? idKeyOf(message) : undefined;
    if (key !== undefined) this.inFlight.add(key);
    const post = (): Promise<void> =>
      this.transport.send(message as Parameters<StreamableHTTPClientTransport["send"]>[0]).catch((error: unknown) => this.fail(error));
    if (message["method"] === "initialize" && key !== undefined) {
      this.handshakes.add(key);
      this.handshake = this.handshake.then(post);
    } else void this.handshake.then(post);
  }

  private received(message: JsonRecord): void {
    if (this.closed) return;
    // Written as JSON.stringify writes what the transport read: the bytes the relay records and relays.
    this.serverOut.push(Buffer.concat([Buffer.from(JSON.stringify(message), "utf8"), NEWLINE]));
    const key = isResponseShaped(message) ? idKeyOf(message) : undefined;
    if (key === undefined) return;
    if (this.handshakes.delete(key)) {
      const result = message["result"];
      // Later requests say the version agreed on (MCP-Protocol-Version), as a client does.
      if (isRecord(result) && typeof result["protocolVersion"] === "string") this.transport.setProtocolVersion(result["protocolVersion"]);
    }
    this.inFlight.delete(key);
    this.closeWhenAnswered();
  }

  /** The client hung up: once every request is answered, end the session (DELETE) and close. */
  private closeWhenAnswered(): void {
    if (this.inputEnded && this.inFlight.size === 0) void this.close();
  }

  private fail(error: unknown): void {
    if (this.closed) return;
    this.options.onFailure(`the request to ${this.options.url.origin}${this.options.url.pathname} failed: ${messageOf(error)}`);
    void this.close();
  }

  /**
   * End the session and the transport; the server's output ends. Safe to call twice. A server
   * that does not answer the DELETE within {@link DELETE_MS} is let go: closing the transport
   * aborts the request.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await settlesWithin(this.transport.terminateSession(), DELETE_MS);
    await this.transport.close().catch(() => undefined);
    this.ended();
  }

  private ended(): void {
    this.closed = true;
    if (!this.serverOut.readableEnded) this.serverOut.push(null);
  }
}
