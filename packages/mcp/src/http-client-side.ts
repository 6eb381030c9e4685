import type { ServerResponse } from "node:http";
import { Readable, Writable } from "node:stream";
import { FrameSplitter, isBlankFrame } from "./frames.js";
import { elementsOf, idKeyOf, isRecord, isResponseShaped, type Json, type JsonRecord } from "./message.js";

/**
 * The client side of one relay when the client speaks Streamable HTTP to `aegis wrap
 * --listen` (SPEC §17.10): the bodies of its POSTs become frames on `clientIn`, and what the
 * relay writes to `clientOut` (the server's messages and wrap's refusals, each already
 * recorded) goes back on the HTTP response it belongs to.
 *
 * A POST holding requests is answered with an event stream (or, when the client accepts only
 * JSON, one JSON body) carrying the answers to its requests, and the server's own messages
 * that belong to it, then closed. A POST holding none is answered 202 at once.
 */

/** One POST waiting for its answers. */
interface Exchange {
  readonly res: ServerResponse;
  readonly sse: boolean;
  /** Id keys of its requests not yet answered. */
  readonly waiting: Set<string>;
  /** The progress tokens its requests carry (as JSON text): the server's progress goes here. */
  readonly progress: ReadonlySet<string>;
  /** JSON mode: the answers, written once all have come. */
  readonly answers: Buffer[];
  started: boolean;
}

/** Whether the relay still reads this client: `hung_up` after DELETE, `closed` once the relay ended. */
type ClientState = { readonly code: "open" } | { readonly code: "hung_up" } | { readonly code: "closed"; readonly closing: Closing };

/** What a POST that comes too late is answered, and what every open exchange is when the relay ends. */
export interface Closing {
  readonly status: number;
  readonly message: string;
  readonly code: number;
}

const NEWLINE = Buffer.from("\n");
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

export class HttpClientSide {
  readonly clientIn = new Readable({ read: () => undefined });
  readonly clientOut: Writable;
  /** Open exchanges, oldest first. */
  private readonly exchanges = new Set<Exchange>();
  /** The exchanges waiting on an id key; the newest first, for a request that reuses an id in flight. */
  private readonly byKey = new Map<string, Exchange[]>();
  /** The stream a GET opened, for the server's messages that belong to no request. */
  private stream: ServerResponse | undefined;
  private state: ClientState = { code: "open" };

  constructor(
    /** Headers on every response: the session's id. */
    private readonly headers: Readonly<Record<string, string>>,
  ) {
    const frames = new FrameSplitter();
    this.clientOut = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        for (const event of frames.push(chunk)) if (event.code === "frame" && !isBlankFrame(event.bytes)) this.route(event.bytes);
        done();
      },
    });
  }

  /**
   * A POST whose body read strictly: `frame` (its bytes as recorded) goes to the relay, and
   * `res` waits for the answers to the requests in `value`.
   */
  post(frame: Buffer, value: Json, res: ServerResponse, sse: boolean): void {
    // Nothing reads this client any more: answered at once, never left waiting.
    if (this.state.code === "hung_up") return void answerError(res, this.headers, { status: 404, message: "Session not found", code: -32001 });
    if (this.state.code === "closed") return void answerError(res, this.headers, this.state.closing);
    const keys: string[] = [];
    const progress = new Set<string>();
    for (const element of elementsOf(value)) {
      if (!isRecord(element) || typeof element["method"] !== "string") continue;
      const key = idKeyOf(element);
      if (key !== undefined) keys.push(key);
      const token = progressTokenOf(element);
      if (token !== undefined) progress.add(token);
    }
    if (keys.length === 0) {
      res.writeHead(202, this.headers).end();
    } else {
      const exchange: Exchange = { res, sse, waiting: new Set(keys), progress, answers: [], started: false };
      this.exchanges.add(exchange);
      for (const key of keys) this.byKey.set(key, [exchange, ...(this.byKey.get(key) ?? [])]);
      // A client that goes away is not a cancellation (Streamable HTTP): its answers are still
      // recorded when they come, and go nowhere.
      res.once("close", () => this.forget(exchange));
    }
    this.clientIn.push(Buffer.concat([frame, NEWLINE]));
  }

  /** A GET: the stream for the server's messages that belong to no request. One at a time. */
  listen(res: ServerResponse): boolean {
    if (this.stream !== undefined) return false;
    this.stream = res;
    res.writeHead(200, { ...this.headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    res.once("close", () => {
      if (this.stream === res) this.stream = undefined;
    });
    return true;
  }

  /** The client ended its session: nothing more comes from it. */
  end(): void {
    if (this.state.code !== "open") return;
    this.state = { code: "hung_up" };
    this.clientIn.push(null);
  }

  /**
   * The relay ended: every response still open is closed, and one that has not begun is
   * answered `closing` (an HTTP error saying why, SPEC §17.10), as is every later POST.
   */
  closeAll(closing: Closing): void {
    if (this.state.code === "open") this.clientIn.push(null);
    this.state = { code: "closed", closing };
    for (const exchange of this.exchanges) {
      if (exchange.started) exchange.res.end();
      else if (!exchange.res.headersSent) answerError(exchange.res, this.headers, closing);
    }
    this.exchanges.clear();
    this.byKey.clear();
    this.stream?.end();
    this.stream = undefined;
  }

  private route(frame: Buffer): void {
    const value = JSON.parse(frame.toString("utf8")) as Json;
    const elements = elementsOf(value).filter(isRecord);
    const answered = elements.filter(isResponseShaped).flatMap((e) => idKeyOf(e) ?? []);
    const [first] = answered;
    if (first !== undefined) {
      const exchange = this.byKey.get(first)?.[0];
      if (exchange === undefined) return;
      this.deliver(exchange, frame);
      for (const key of answered) this.answer(exchange, key);
      return;
    }
    const [message] = elements;
    if (message === undefined) return;
    const related = this.relatedTo(message);
    // A client that accepts only JSON gets its answers in one body: a message of the server's cannot go there.
    const target = (related?.sse === true ? related : undefined) ?? this.stream ?? this.oldestStream();
    if (target === undefined) return;
    if ("res" in target) this.deliver(target, frame);
    else writeEvent(target, frame);
  }

  /** The exchange a message of the server's belongs to: its subscription's, or its progress token's. */
  private relatedTo(message: JsonRecord): Exchange | undefined {
    const params = message["params"];
    if (!isRecord(params)) return undefined;
    const meta = params["_meta"];
    const subscription = isRecord(meta) ? keyOf(meta[SUBSCRIPTION_ID]) : undefined;
    if (subscription !== undefined) return this.byKey.get(subscription)?.[0];
    const token = keyOf(params["progressToken"]);
    if (token === undefined) return undefined;
    for (const exchange of this.exchanges) if (exchange.progress.has(token)) return exchange;
    return undefined;
  }

  /** With no stream of its own open, a request of the server's goes where the client is listening: the oldest open event stream. */
  private oldestStream(): Exchange | undefined {
    for (const exchange of this.exchanges) if (exchange.sse) return exchange;
    return undefined;
  }

  private deliver(exchange: Exchange, frame: Buffer): void {
    if (!exchange.sse) {
      exchange.answers.push(frame);
      return;
    }
    if (!exchange.started) {
      exchange.started = true;
      exchange.res.writeHead(200, { ...this.headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
    }
    writeEvent(exchange.res, frame);
  }

  private answer(exchange: Exchange, key: string): void {
    exchange.waiting.delete(key);
    const stack = this.byKey.get(key);
    if (stack !== undefined) {
      const rest = stack.filter((e) => e !== exchange);
      if (rest.length === 0) this.byKey.delete(key);
      else this.byKey.set(key, rest);
    }
    if (exchange.waiting.size > 0) return;
    this.exchanges.delete(exchange);
    if (exchange.sse) {
      exchange.res.end();
      return;
    }
    const [only] = exchange.answers;
    const body = exchange.answers.length === 1 && only !== undefined ? only : joinArray(exchange.answers);
    exchange.res.writeHead(200, { ...this.headers, "content-type": "application/json" }).end(body);
  }

  private forget(exchange: Exchange): void {
    if (!this.exchanges.has(exchange)) return;
    this.exchanges.delete(exchange);
    for (const key of exchange.waiting) {
      const rest = (this.byKey.get(key) ?? []).filter((e) => e !== exchange);
      if (rest.length === 0) this.byKey.delete(key);
      else this.byKey.set(key, rest);
    }
  }
}

/** An HTTP error wrap answers itself, as the SDK's servers do: a JSON-RPC error naming no request. */
function answerError(res: ServerResponse, headers: Readonly<Record<string, string>>, closing: Closing): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: closing.code, message: closing.message }, id: null });
  res.writeHead(closing.status, { ...headers, "content-type": "application/json" }).end(body);
}

/** One server-sent event holding one message: its bytes, on one `data:` line (they hold no newline). */
function writeEvent(res: ServerResponse, frame: Buffer): void {
  res.write(Buffer.concat([Buffer.from("event: message\ndata: "), frame, Buffer.from("\n\n")]));
}

/**
 * The answers of a batch that came in several frames, as one array: each frame's bytes as
 * they were recorded, an array frame's elements without its brackets.
 */
function joinArray(parts: readonly Buffer[]): Buffer {
  const out: Buffer[] = [Buffer.from("[")];
  parts.forEach((part, i) => {
    const text = part.toString("utf8").trimEnd();
    const inner = text.startsWith("[") && text.endsWith("]") ? Buffer.from(text.slice(1, -1), "utf8") : part;
    out.push(...(i === 0 ? [inner] : [Buffer.from(","), inner]));
  });
  out.push(Buffer.from("]"));
  return Buffer.concat(out);
}

function progressTokenOf(request: JsonRecord): string | undefined {
  const params = request["params"];
  const meta = isRecord(params) ? params["_meta"] : undefined;
  return isRecord(meta) ? keyOf(meta["progressToken"]) : undefined;
}

function keyOf(value: Json | undefined): string | undefined {
  return value === undefined || value === null ? undefined : JSON.stringify(value);
}
