import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { Readable, Writable } from "node:stream";
import { messageOf } from "@aegis/format/internal";
import { settlesWithin } from "./bounded.js";
import { Exchanges, unfollowed, type Method } from "./http-exchange.js";
import { FrameSplitter, isBlankFrame } from "./frames.js";
import { elementsOf, idKeyOf, isRecord, isResponseShaped, type Json, type JsonRecord } from "./message.js";
import { reencoded } from "./strict-frame.js";
import { EventReader, type MessageBound, type ServerSentEvent } from "./sse.js";

/**
 * A Streamable HTTP server as the relay's server side (SPEC §17.10), over `node:http`: each
 * admitted frame is POSTed as the bytes the relay recorded, and each message the server sends
 * (an event's data, or a JSON body) comes out of `serverOut` as one chunk, the bytes as they
 * came, for the relay to judge, record and relay. A message holding a line end cannot be one
 * frame to a stdio client: it comes out written again as `JSON.stringify` writes the value
 * the strict reader reads, or as it came when it does not read (the recorder refuses it).
 */
export interface HttpUpstreamOptions {
  readonly url: URL;
  /** Request headers on every request: `--header`, and the secrets named by `--header-env`. */
  readonly headers: Readonly<Record<string, string>>;
  /** A failure of the connection, in words, for wrap's stderr. Never holds a header. */
  readonly onFailure: (detail: string) => void;
  /** The bound on each message the server sends, applied before it is held whole (SPEC §17.1). */
  readonly bound: MessageBound;
}

/** How long a server is given to answer the session's DELETE before wrap lets it go (SPEC §17.10). */
const DELETE_MS = 3000;
/** Reconnecting an event stream that ended before its answer, as the MCP SDK's client does. */
const RECONNECT = { firstMs: 1000, maxMs: 30_000, growth: 1.5, tries: 2 } as const;

/** What a stream that ended may resume from. */
interface StreamState {
  lastEventId: string | undefined;
  answered: boolean;
}

export class HttpUpstream {
  readonly serverIn: Writable;
  /** One message a chunk (object mode): the relay takes each as a frame. */
  readonly serverOut = new Readable({ objectMode: true, read: () => undefined });
  private readonly exchanges: Exchanges;
  private readonly baseHeaders: Readonly<Record<string, string>>;
  /** Requests sent and not yet answered, by id key: the input ends once they are. */
  private readonly inFlight = new Set<string>();
  /** `initialize` requests sent, by id key: their answer names the protocol version. */
  private readonly handshakes = new Set<string>();
  /** Messages wait for the handshake to be answered: its answer carries the session id. */
  private handshake: Promise<void> = Promise.resolve();
  private sessionId: string | undefined;
  private protocolVersion: string | undefined;
  /** The server's `retry`, once it said one: the wait before every reconnection. */
  private retryMs: number | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private inputEnded = false;
  private closed = false;

  constructor(private readonly options: HttpUpstreamOptions) {
    this.exchanges = new Exchanges(options.url);
    this.baseHeaders = headersOf(options.headers);
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
  }

  /** Post one admitted frame: the relay read it strictly, so it parses. */
  private send(frame: Buffer): void {
    const value = JSON.parse(frame.toString("utf8")) as Json;
    const messages = elementsOf(value).filter(isRecord);
    const keys = messages.flatMap((m) => (typeof m["method"] === "string" ? (idKeyOf(m) ?? []) : []));
    for (const key of keys) this.inFlight.add(key);
    const handshake = messages.find((m) => m["method"] === "initialize");
    const initialized = !Array.isArray(value) && messages[0]?.["method"] === "notifications/initialized";
    const post = (): Promise<void> => this.post(frame, handshake !== undefined, keys.length > 0, initialized).catch((error: unknown) => this.fail(error));
    const key = handshake === undefined ? undefined : idKeyOf(handshake);
    if (key !== undefined) {
      this.handshakes.add(key);
      this.handshake = this.handshake.then(post);
    } else void this.handshake.then(post);
  }

  private async post(frame: Buffer, handshake: boolean, hasRequests: boolean, initialized: boolean): Promise<void> {
    if (this.closed) return;
    const headers = this.headers("POST", handshake);
    const { response, url } = await this.exchanges.send("POST", headers, frame);
    const status = response.statusCode ?? 0;
    if (handshake && ok(status)) this.sessionId = headerOf(response, "mcp-session-id");
    if (!ok(status)) throw new Error(await this.refusal("POST", url, response));
    if (status === 202 || !hasRequests) {
      response.resume();
      // The stream for the server's own messages, once the session is set up.
      if (status === 202 && initialized) void this.listen({ lastEventId: undefined, answered: false }, 0, false);
      return;
    }
    const type = mediaType(response);
    // The stream is read on its own: later messages need only its headers (the session id).
    if (type === "text/event-stream") return void this.events(response, false);
    if (type === "application/json") return this.json(response);
    response.resume();
    throw new Error(`the server answered a POST with ${type === "" ? "no content type" : type}, neither JSON nor an event stream`);
  }

  /** An event stream, message by message; one that ends before its answer resumes as the SDK's client does. */
  private events(response: IncomingMessage, reconnectable: boolean, state: StreamState = { lastEventId: undefined, answered: false }): Promise<void> {
    let primed = false;
    const reader = new EventReader(this.options.bound, (event: ServerSentEvent) => {
      if (event.retry !== undefined) this.retryMs = event.retry;
      // An empty id forgets the last one, as the standard says.
      if (event.id !== undefined) state.lastEventId = event.id === "" ? undefined : event.id;
      if (event.id !== undefined && event.id !== "") primed = true;
      if (event.data.length === 0 || event.type !== "message") return;
      if (this.deliver(event.data)) state.answered = true;
    });
    return new Promise<void>((resolve) => {
      response.on("data", (chunk: Buffer) => reader.push(chunk));
      // A stream cut short is a stream that ended: the same resumption, never the connection's end.
      response.on("error", () => undefined);
      response.once("close", () => {
        reader.end();
        if ((reconnectable || primed) && !state.answered && !this.closed) this.reconnect(state, 0);
        resolve();
      });
    });
  }

  /** A JSON body, held only up to the bound: one message, or a batch of them. */
  private async json(response: IncomingMessage): Promise<void> {
    const parts: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes <= this.options.bound.maxMessageBytes) parts.push(chunk);
      else parts.length = 0;
    }
    if (bytes > this.options.bound.maxMessageBytes) this.options.bound.onOversize(bytes);
    else this.deliver(Buffer.concat(parts));
  }

  /** Resume a stream from its last event (`Last-Event-ID`), after the server's `retry` or a backoff. */
  private reconnect(state: StreamState, attempt: number): void {
    if (attempt >= RECONNECT.tries) return;
    const wait = this.retryMs ?? Math.min(RECONNECT.firstMs * RECONNECT.growth ** attempt, RECONNECT.maxMs);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.listen(state, attempt, true);
    }, wait);
    this.timers.add(timer);
  }

  /** A GET: the session's stream for the server's own messages, or a stream resumed. A failure is not the connection's end. */
  private async listen(state: StreamState, attempt: number, resuming: boolean): Promise<void> {
    if (this.closed) return;
    const headers = this.headers("GET", false);
    if (state.lastEventId !== undefined) headers["last-event-id"] = state.lastEventId;
    try {
      const { response } = await this.exchanges.send("GET", headers);
      const status = response.statusCode ?? 0;
      if (ok(status) && mediaType(response) === "text/event-stream") return await this.events(response, true, state);
      response.resume();
      // 405: the server offers no such stream.
      if (status !== 405 && resuming) this.reconnect(state, attempt + 1);
    } catch {
      if (resuming) this.reconnect(state, attempt + 1);
    }
  }

  /**
   * One message to the relay; whether it answered a request in flight. Its bytes go as they
   * came unless they hold a line end (see the class).
   */
  private deliver(bytes: Buffer): boolean {
    if (this.closed) return false;
    const frame = bytes.includes(0x0a) || bytes.includes(0x0d) ? reencoded(bytes) : bytes;
    this.serverOut.push(frame);
    let value: Json;
    try {
      value = JSON.parse(frame.toString("utf8")) as Json;
    } catch {
      return false;
    }
    let answered = false;
    for (const message of elementsOf(value)) {
      const key = isRecord(message) && isResponseShaped(message) ? idKeyOf(message) : undefined;
      if (key === undefined) continue;
      answered = true;
      if (this.handshakes.delete(key)) this.agreed(message as JsonRecord);
      this.inFlight.delete(key);
    }
    if (answered) this.closeWhenAnswered();
    return answered;
  }

  /** Later requests say the version the handshake agreed on (MCP-Protocol-Version), as a client does. */
  private agreed(answer: JsonRecord): void {
    const result = answer["result"];
    if (isRecord(result) && typeof result["protocolVersion"] === "string") this.protocolVersion = result["protocolVersion"];
  }

  private headers(method: Method, handshake: boolean): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { ...this.baseHeaders };
    const accept = acceptOf(this.baseHeaders["accept"], method);
    if (accept !== "") headers["accept"] = accept;
    if (method === "POST") headers["content-type"] = "application/json";
    if (!handshake && this.sessionId !== undefined) headers["mcp-session-id"] = this.sessionId;
    if (this.protocolVersion !== undefined) headers["mcp-protocol-version"] = this.protocolVersion;
    return headers;
  }

  /** Why the server refused a request, in words: its status, and at most the bound of its text. */
  private async refusal(method: Method, url: URL, response: IncomingMessage): Promise<string> {
    const redirect = unfollowed(url, response);
    const parts: Buffer[] = [];
    let left = Math.min(this.options.bound.maxMessageBytes, 4096);
    // Reading stops at the bound: a body that never ends holds nothing open.
    for await (const chunk of response as AsyncIterable<Buffer>) {
      parts.push(chunk.subarray(0, left));
      left -= chunk.length;
      if (left <= 0) break;
    }
    const text = Buffer.concat(parts).toString("utf8").trim();
    return `${method} answered ${response.statusCode ?? 0}${redirect === undefined ? (text === "" ? "" : `: ${text}`) : `, ${redirect}`}`;
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
   * End the session and every request under way; the server's output ends. Safe to call
   * twice. A server that does not answer the DELETE within {@link DELETE_MS} is let go: the
   * request is aborted.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.sessionId !== undefined) {
      const deleted = this.exchanges.send("DELETE", this.headers("DELETE", false)).then(({ response }) => void response.resume());
      await settlesWithin(deleted, DELETE_MS);
    }
    this.exchanges.close();
    if (!this.serverOut.readableEnded) this.serverOut.push(null);
  }
}

const ok = (status: number): boolean => status >= 200 && status < 300;

function headerOf(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function mediaType(response: IncomingMessage): string {
  return (response.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** The given headers by their lower-case names, as HTTP compares them. */
function headersOf(given: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) headers[name.toLowerCase()] = value;
  return headers;
}

/** The media types a request accepts: any the user gave, and what Streamable HTTP answers with. */
function acceptOf(given: string | undefined, method: Method): string {
  const ours = method === "POST" ? ["application/json", "text/event-stream"] : method === "GET" ? ["text/event-stream"] : [];
  const types = [...(given === undefined ? [] : given.split(",").map((t) => t.trim().toLowerCase())), ...ours].filter((t) => t !== "");
  return [...new Set(types)].join(", ");
}
