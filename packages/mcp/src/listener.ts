import { createHash, randomUUID, timingSafeEqual, type Hash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import type { HttpClientSide } from "./http-client-side.js";
import { isRecord } from "./message.js";
import { readFrame } from "./strict-frame.js";

/**
 * `aegis wrap --listen` (SPEC §17.10): Streamable HTTP served to MCP clients on the user's
 * machine, where a web page and every local user can reach it too (design §8). Before
 * anything is read, every request is checked: a present `Origin` that is not the listener's
 * own gets 403 (DNS rebinding), and so does, on a loopback address, a `Host` that does not
 * name one; a request without the bearer token gets 401. The token is compared in constant
 * time and never written anywhere.
 *
 * Each client session (an `initialize`, answered with an `Mcp-Session-Id`) is a connection of
 * its own to the server: a relay, a recorder, and a server process or HTTP session of its
 * own. Requests that name no session (MCP 2026-07-28 has none) share one connection.
 */
export interface ListenerOptions {
  readonly host: string;
  readonly port: number;
  /** The bearer token clients must present, on every bind. */
  readonly token: string;
  /** The largest body read; a longer one is hashed as it comes, refused and recorded (SPEC §17.1). */
  readonly maxBodyBytes: number;
  /** A new connection to the server, for a session (its id) or for requests that name none. */
  readonly open: (sessionId: string | undefined) => Promise<Connection>;
  readonly say: (text: string) => void;
}

/** What the listener needs of one connection. */
export interface Connection {
  readonly client: HttpClientSide;
  /** Refuse, and record, a body that does not read strictly (SPEC §17.1): the answer to send. */
  refuse(body: Buffer): Promise<Buffer | undefined>;
  /** Refuse, and record, a body over the bound, by its length and SHA-256 (SPEC §17.1). */
  refuseOversize(bytes: number, sha256: string): Promise<Buffer | undefined>;
  /** The client ended its session (DELETE): nothing more comes from it. */
  hangUp(): void;
  /** Settles once the connection's relay has ended and its server is let go. */
  readonly ended: Promise<unknown>;
}

const PATH = "/mcp";
const STOPPING = "aegis wrap is stopping";
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether `host` is a loopback address or name: only there may wrap make a token of its own (SPEC §17.10). */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare === "localhost" || bare === "::1" || (isIP(bare) === 4 && bare.startsWith("127."));
}

export class Listener {
  private readonly sessions = new Map<string, Connection>();
  private shared: Promise<Connection> | undefined;
  private readonly origins: ReadonlySet<string>;
  private readonly tokenDigest: Buffer;
  private stopping = false;

  private constructor(
    private readonly server: Server,
    private readonly options: ListenerOptions,
    readonly url: string,
    port: number,
  ) {
    const names = isLoopback(options.host) ? ["localhost", "127.0.0.1", "[::1]"] : [hostForUrl(options.host)];
    this.origins = new Set(names.flatMap((name) => [`http://${name}:${port}`, `https://${name}:${port}`]));
    this.tokenDigest = sha256(options.token);
  }

  /** Bind, and serve. Resolves once listening, with the port bound (0 asks the system for one). */
  static async start(options: ListenerOptions): Promise<Listener> {
    // Every wait bounded (SPEC §17.10): headers within 60 s, the whole request within 300 s.
    const server = createServer({ headersTimeout: 60_000, requestTimeout: 300_000 });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : options.port;
    const listener = new Listener(server, options, `http://${hostForUrl(options.host)}:${port}${PATH}`, port);
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      listener.handle(req, res).catch((error: unknown) => {
        options.say(`a request failed: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent) reply(res, 500, "Internal error");
        else res.end();
      });
    });
    return listener;
  }

  /** Every connection open now, to stop them. */
  connections(): Connection[] {
    return [...this.sessions.values()];
  }

  /** The connection shared by requests that name no session, if one was opened. */
  sharedConnection(): Promise<Connection> | undefined {
    return this.shared;
  }

  /** Open nothing more: a later request is answered 503; the connections end on their own, and their responses with them. */
  stop(): void {
    this.stopping = true;
    this.server.close();
    this.server.closeIdleConnections();
  }

  /** Once every connection has ended: drop what is left of the sockets. */
  destroy(): void {
    this.server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = this.check(req);
    if (refused !== undefined) {
      req.resume();
      reply(res, refused.status, refused.message, refused.status === 401 ? { "www-authenticate": 'Bearer realm="aegis wrap"' } : {});
      return;
    }
    if (this.stopping) return void stoppingReply(req, res);
    const sessionId = header(req, "mcp-session-id");
    const session = sessionId === undefined ? undefined : this.sessions.get(sessionId);
    if (sessionId !== undefined && session === undefined) {
      req.resume();
      return void reply(res, 404, "Session not found", {}, -32001);
    }
    if (req.method === "GET") {
      req.resume();
      if (session === undefined) return void reply(res, 400, "Bad Request: No valid session ID provided");
      if (!accepts(req, "text/event-stream")) return void reply(res, 406, "Not Acceptable: Client must accept text/event-stream");
      if (!session.client.listen(res)) reply(res, 409, "Conflict: Only one SSE stream is allowed per session");
      return;
    }
    if (req.method === "DELETE") {
      req.resume();
      if (session === undefined) return void reply(res, 400, "Bad Request: No valid session ID provided");
      if (sessionId !== undefined) this.sessions.delete(sessionId);
      session.hangUp();
      res.writeHead(200).end();
      return;
    }
    if (req.method !== "POST") {
      req.resume();
      return void reply(res, 405, "Method not allowed", { allow: "GET, POST, DELETE" });
    }
    if (!(header(req, "content-type") ?? "").toLowerCase().includes("application/json")) {
      req.resume();
      return void reply(res, 415, "Unsupported Media Type: Content-Type must be application/json");
    }
    const body = await readBody(req, this.options.maxBodyBytes);
    // While the body came, the stop may have begun or the session ended: then nothing opens or runs.
    if (this.stopping) return void reply(res, 503, STOPPING);
    if (sessionId !== undefined && this.sessions.get(sessionId) !== session) return void reply(res, 404, "Session not found", {}, -32001);
    const connection = session ?? (await this.connectionFor(body, res));
    if (connection === undefined) return;
    const json = { "content-type": "application/json", ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }) };
    if (body.code === "oversize") {
      const answer = await connection.refuseOversize(body.bytes, body.sha256);
      res.writeHead(413, json).end(answer);
      return;
    }
    const reading = readFrame(body.bytes);
    if (!reading.ok) {
      const answer = await connection.refuse(body.bytes);
      res.writeHead(400, json).end(answer);
      return;
    }
    // What crosses HTTP is recorded as JSON.stringify writes the value read (SPEC §17.10).
    connection.client.post(Buffer.from(JSON.stringify(reading.value), "utf8"), reading.value, res, accepts(req, "text/event-stream"));
  }

  /** The connection a POST naming no session goes to: a new session for an `initialize`, else the shared one. */
  private async connectionFor(body: Body, res: ServerResponse): Promise<Connection | undefined> {
    let connection: Connection;
    try {
      if (body.code === "frame" && isInitialize(body.bytes)) {
        const id = randomUUID();
        connection = await this.options.open(id);
        this.sessions.set(id, connection);
        void connection.ended.then(() => this.sessions.delete(id));
      } else {
        this.shared ??= this.options.open(undefined);
        connection = await this.shared;
      }
    } catch (error) {
      if (this.stopping) return void reply(res, 503, STOPPING);
      this.options.say(`could not reach the server for a new session: ${error instanceof Error ? error.message : String(error)}`);
      reply(res, 502, "aegis wrap could not reach the server");
      return undefined;
    }
    return connection;
  }

  /** Why a request is refused before anything of it is read, if it is (design §8). */
  private check(req: IncomingMessage): { readonly status: number; readonly message: string } | undefined {
    const origin = header(req, "origin");
    if (origin !== undefined && !this.origins.has(origin.toLowerCase())) return { status: 403, message: "Forbidden: Origin not allowed" };
    if (isLoopback(this.options.host)) {
      const host = hostnameOf(header(req, "host") ?? "");
      if (!LOOPBACK_NAMES.has(host)) return { status: 403, message: "Forbidden: Host not allowed" };
    }
    const given = /^Bearer (.+)$/i.exec(header(req, "authorization") ?? "")?.[1];
    if (given === undefined || !timingSafeEqual(sha256(given), this.tokenDigest)) return { status: 401, message: "Unauthorized" };
    const path = new URL(req.url ?? "/", "http://listener").pathname;
    if (path !== PATH) return { status: 404, message: `Not found: the MCP endpoint is ${PATH}` };
    return undefined;
  }
}

type Body = { readonly code: "frame"; readonly bytes: Buffer } | { readonly code: "oversize"; readonly bytes: number; readonly sha256: string };

/** The request's body, whole up to `max` bytes; past it, counted and hashed as it comes, not kept. */
async function readBody(req: IncomingMessage, max: number): Promise<Body> {
  const parts: Buffer[] = [];
  let held = 0;
  let over: { bytes: number; readonly hash: Hash } | undefined;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (over !== undefined) {
      over.bytes += chunk.length;
      over.hash.update(chunk);
    } else if (held + chunk.length > max) {
      const hash = createHash("sha256");
      for (const part of parts) hash.update(part);
      hash.update(chunk);
      over = { bytes: held + chunk.length, hash };
      parts.length = 0;
    } else {
      parts.push(chunk);
      held += chunk.length;
    }
  }
  return over === undefined ? { code: "frame", bytes: Buffer.concat(parts) } : { code: "oversize", bytes: over.bytes, sha256: over.hash.digest("hex") };
}

/** A request that came once the stop began: not read, answered 503, run nowhere. */
function stoppingReply(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  reply(res, 503, STOPPING, { connection: "close" });
}

function isInitialize(bytes: Buffer): boolean {
  const reading = readFrame(bytes);
  return reading.ok && isRecord(reading.value) && reading.value["method"] === "initialize";
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function accepts(req: IncomingMessage, type: string): boolean {
  return (header(req, "accept") ?? "").toLowerCase().includes(type);
}

/** The name part of a Host header, lowercased: `[::1]:3000` is `[::1]`, `LocalHost:80` is `localhost`. */
function hostnameOf(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith("[")) return lower.slice(0, lower.indexOf("]") + 1);
  const colon = lower.indexOf(":");
  return colon === -1 ? lower : lower.slice(0, colon);
}

function hostForUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** An HTTP error the listener answers itself, as the SDK's servers do: a JSON-RPC error naming no request. */
function reply(res: ServerResponse, status: number, message: string, headers: Readonly<Record<string, string>> = {}, code = -32000): void {
  res.writeHead(status, { ...headers, "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
