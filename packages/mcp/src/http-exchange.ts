import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * Requests to one Streamable HTTP server over `node:http` (SPEC §17.10): kept-alive
 * connections, and redirects followed only where they keep the method and stay within the
 * server's origin, so that no header (`--header`, `--header-env`: credentials) is ever sent
 * anywhere else.
 */
export type Method = "POST" | "GET" | "DELETE";

/** A response, and the URL it came from. */
export interface Answered {
  readonly response: IncomingMessage;
  readonly url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

export class Exchanges {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });
  /** Requests not yet answered: aborted when the connection closes. */
  private readonly open = new Set<ClientRequest>();

  constructor(private readonly endpoint: URL) {}

  /**
   * Send one request, following redirects within the origin. Resolves with the final
   * response: a redirect that was not followed comes back as it is, for {@link unfollowed}
   * to say why. Rejects when the server cannot be reached or the connection fails.
   */
  async send(method: Method, headers: OutgoingHttpHeaders, body?: Buffer): Promise<Answered> {
    let url = this.endpoint;
    for (let followed = 0; ; followed++) {
      const response = await this.once(url, method, headers, body);
      const target = redirectTarget(url, response);
      if (target === undefined || followed === MAX_REDIRECTS || !followable(method, response.statusCode ?? 0, url, target)) return { response, url };
      response.resume();
      url = target;
    }
  }

  /** Abort every request under way and close the kept connections. */
  close(): void {
    for (const req of this.open) req.destroy();
    this.open.clear();
    this.http.destroy();
    this.https.destroy();
  }

  private once(url: URL, method: Method, headers: OutgoingHttpHeaders, body: Buffer | undefined): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === "https:";
      const options = { method, headers: body === undefined ? headers : { ...headers, "content-length": body.length }, agent: secure ? this.https : this.http };
      const req = (secure ? httpsRequest : httpRequest)(url, options, (response) => {
        this.open.delete(req);
        resolve(response);
      });
      this.open.add(req);
      req.once("error", (error) => {
        this.open.delete(req);
        reject(error);
      });
      req.end(body);
    });
  }
}

/** Where a redirect points, when the response is one and names a place. */
function redirectTarget(from: URL, response: IncomingMessage): URL | undefined {
  const location = REDIRECTS.has(response.statusCode ?? 0) ? response.headers.location : undefined;
  if (location === undefined || location === "") return undefined;
  try {
    return new URL(location, from);
  } catch {
    return undefined;
  }
}

/**
 * A redirect is followed when it keeps the method (any for GET; for POST and DELETE only 307
 * and 308, which keep the body), keeps the user information, and stays within the origin:
 * the same scheme, host and port, or the https form of an http URL on default ports.
 */
function followable(method: Method, status: number, from: URL, to: URL): boolean {
  const keepsMethod = method === "GET" || status === 307 || status === 308;
  const keepsUser = (to.username === "" && to.password === "") || (to.username === from.username && to.password === from.password);
  const sameOrigin = from.protocol === to.protocol && from.host === to.host;
  const upgraded = from.protocol === "http:" && to.protocol === "https:" && from.hostname === to.hostname && from.port === "" && to.port === "";
  return keepsMethod && keepsUser && (sameOrigin || upgraded);
}

/** Why a redirect answered `url` and was not followed, for wrap's stderr; undefined when the response is no redirect. */
export function unfollowed(url: URL, response: IncomingMessage): string | undefined {
  const target = redirectTarget(url, response);
  if (target === undefined) return undefined;
  target.username = target.password = target.search = target.hash = "";
  return `a redirect to ${target.href}, not followed: wrap follows a redirect only within the server's origin; give that URL as --url if it is the server`;
}
