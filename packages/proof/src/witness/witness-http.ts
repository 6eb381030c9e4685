import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import { MAX_REQUEST_BYTES } from "./protocol.js";
import type { Witness } from "./witness.js";

/**
 * A witness over HTTP (SPEC §19.6): `POST <prefix>/add-checkpoint`, the prefix being the
 * listener's root. Every wait and buffer is bounded: a body of at most the request bound,
 * headers within 10 s, a whole request within 30 s, at most 256 connections at once.
 */
export interface WitnessListener {
  /** The submission prefix clients are given: `http://HOST:PORT`. */
  readonly url: string;
  close(): Promise<void>;
}

const PATH = "/add-checkpoint";

export async function serveWitness(witness: Witness, host: string, port: number, say: (text: string) => void): Promise<WitnessListener> {
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 });
  server.maxConnections = 256;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    handle(witness, req, res).catch((error: unknown) => {
      say(`a request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("internal error\n");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return {
    url: `http://${isIP(host) === 6 ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(witness: Witness, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? "/", "http://witness").pathname;
  if (path !== PATH) return void plain(req, res, 404, `not found: a witness takes POST ${PATH}`);
  if (req.method !== "POST") return void plain(req, res, 405, `${PATH} takes POST`, { allow: "POST" });
  const body = await readBounded(req);
  if (body === undefined) return void plain(req, res, 400, `malformed request: over ${MAX_REQUEST_BYTES} bytes`);
  const answer = await witness.addCheckpoint(body);
  res.writeHead(answer.status, { "content-type": answer.type }).end(answer.body);
}

/** The body, whole, or undefined once it passes the bound (the rest is read and let go). */
async function readBounded(req: IncomingMessage): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= MAX_REQUEST_BYTES) parts.push(chunk);
    else parts.length = 0;
  }
  return bytes > MAX_REQUEST_BYTES ? undefined : Buffer.concat(parts);
}

function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = {}): void {
  req.resume();
  res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`);
}
