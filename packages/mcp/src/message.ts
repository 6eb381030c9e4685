/**
 * What a frame is, as far as recording is concerned (SPEC §17.2). The frame is parsed only
 * to answer a few questions (is it a `tools/call`? what is its id? is it a response?), and
 * nothing parsed is ever written back onto a wire.
 */

/** A JSON value as `JSON.parse` gives it. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonRecord = { readonly [key: string]: Json };

const lossy = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * A frame's JSON, or undefined when it is none. Bytes that are not UTF-8 are read as a
 * JavaScript MCP server reads them (each bad sequence becomes U+FFFD), because what matters
 * is what the server may act on: such a frame that reads as a `tools/call` is recorded as one.
 */
export function parseFrame(frame: Uint8Array): Json | undefined {
  try {
    return JSON.parse(lossy.decode(frame)) as Json;
  } catch {
    return undefined;
  }
}

export function isRecord(value: Json | undefined): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The key a request and its response agree on: the id's JSON text, so that `1` and `"1"`
 * stay two ids, as JSON-RPC says they are. `null` and an absent id are no id.
 */
export function idKeyOf(message: JsonRecord): string | undefined {
  if (!Object.hasOwn(message, "id")) return undefined;
  const id = message["id"];
  if (id === null || id === undefined) return undefined;
  return JSON.stringify(id);
}

/** The elements of a frame: a batch's members, or the one message. */
export function elementsOf(value: Json): readonly Json[] {
  return Array.isArray(value) ? (value as readonly Json[]) : [value];
}

/** What one element of a client frame is. */
export type ClientElement =
  /** A `tools/call` with an id and a string `params.name`. */
  | { readonly code: "call"; readonly id: Json; readonly key: string; readonly name: string; readonly message: JsonRecord }
  /** A `tools/call` without an id (or with `id: null`): nothing can answer it. */
  | { readonly code: "call_notification"; readonly name: string | undefined; readonly message: JsonRecord }
  /** A `tools/call` with an id and no string `params.name`. */
  | { readonly code: "malformed_call"; readonly id: Json; readonly key: string }
  /** A `tools/list` request, whose answer pins tool definitions. */
  | { readonly code: "list_tools"; readonly key: string; readonly continued: boolean }
  /** `notifications/cancelled`: the client gave up on one of its requests. */
  | { readonly code: "cancel"; readonly requestKey: string | undefined; readonly reason: string | undefined }
  /** The client answering a request the server made. */
  | { readonly code: "response"; readonly key: string; readonly message: JsonRecord }
  | { readonly code: "other" };

export function classifyClient(element: Json): ClientElement {
  if (!isRecord(element)) return { code: "other" };
  const method = element["method"];
  if (method === undefined) {
    const key = idKeyOf(element);
    return key !== undefined && isResponseShaped(element) ? { code: "response", key, message: element } : { code: "other" };
  }
  if (method === "tools/call") {
    const params = element["params"];
    const name = isRecord(params) && typeof params["name"] === "string" ? params["name"] : undefined;
    const key = idKeyOf(element);
    if (key === undefined) return { code: "call_notification", name, message: element };
    const id = element["id"] ?? null;
    return name === undefined ? { code: "malformed_call", id, key } : { code: "call", id, key, name, message: element };
  }
  if (method === "tools/list") {
    const key = idKeyOf(element);
    if (key === undefined) return { code: "other" };
    const params = element["params"];
    return { code: "list_tools", key, continued: isRecord(params) && params["cursor"] !== undefined };
  }
  if (method === "notifications/cancelled") {
    const params = element["params"];
    if (!isRecord(params)) return { code: "cancel", requestKey: undefined, reason: undefined };
    const requestId = params["requestId"];
    const reason = params["reason"];
    return {
      code: "cancel",
      requestKey: requestId === undefined || requestId === null ? undefined : JSON.stringify(requestId),
      reason: typeof reason === "string" ? reason : undefined,
    };
  }
  return { code: "other" };
}

/**
 * A response, by its shape: `result` or `error` present and `method` absent (JSON-RPC 2.0
 * §5). MCP is bidirectional: a server's own request (`sampling/createMessage`,
 * `roots/list`) carries an id from the server's space, which collides with the client's as
 * a matter of course, and must never close a call.
 */
export function isResponseShaped(message: JsonRecord): boolean {
  return !Object.hasOwn(message, "method") && (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"));
}

/** What one element of a server frame is. */
export type ServerElement =
  | { readonly code: "response"; readonly key: string; readonly message: JsonRecord }
  /** The server asking the client for its roots: the answer tells where relative paths lead. */
  | { readonly code: "roots_request"; readonly key: string }
  | { readonly code: "other" };

export function classifyServer(element: Json): ServerElement {
  if (!isRecord(element)) return { code: "other" };
  const key = idKeyOf(element);
  if (key === undefined) return { code: "other" };
  if (isResponseShaped(element)) return { code: "response", key, message: element };
  if (element["method"] === "roots/list") return { code: "roots_request", key };
  return { code: "other" };
}
