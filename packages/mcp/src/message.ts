import { fileURLToPath } from "node:url";

/**
 * What a frame is, as far as recording is concerned (SPEC §17.2). The frame is read (by
 * `readFrame`, strictly) only to answer a few questions (is it a `tools/call`? what is its
 * id? is it a response?), and nothing read is ever written back onto a wire.
 */

/** A JSON value, as `readFrame` reads it (and `JSON.parse` would read the same bytes). */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonRecord = { readonly [key: string]: Json };

export function isRecord(value: Json | undefined): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The key a request and its response agree on: the id's JSON text, so that `1` and `"1"`
 * stay two ids, as JSON-RPC says they are. `null` and an absent id are no id.
 */
export function idKeyOf(message: JsonRecord): string | undefined {
  if (!Object.hasOwn(message, "id")) return undefined;
  return keyOf(message["id"]);
}

/**
 * An id's key; undefined for `null`. Read strictly, an id nests at most 127 levels, so it
 * can always be written; the catch keeps a bug of ours from ending the relay.
 */
function keyOf(id: Json | undefined): string | undefined {
  if (id === null || id === undefined) return undefined;
  try {
    return JSON.stringify(id);
  } catch {
    return undefined;
  }
}

/**
 * A tool name the record can carry: well-formed Unicode, at most this many UTF-8 bytes. A
 * longer one, or one with a lone surrogate, names no tool (SPEC §17.2).
 */
const MAX_TOOL_NAME_BYTES = 4096;

function recordableName(name: Json | undefined): string | undefined {
  if (typeof name !== "string" || !name.isWellFormed()) return undefined;
  return Buffer.byteLength(name, "utf8") <= MAX_TOOL_NAME_BYTES ? name : undefined;
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
  | { readonly code: "malformed_call"; readonly id: Json; readonly key: string; readonly message: JsonRecord }
  /** A `tools/list` request, whose answer pins tool definitions. */
  | { readonly code: "list_tools"; readonly id: Json; readonly key: string; readonly continued: boolean }
  /** `notifications/cancelled`: the client gave up on one of its requests. */
  | { readonly code: "cancel"; readonly requestKey: string | undefined; readonly reason: string | undefined }
  /** The client answering a request the server made. */
  | { readonly code: "response"; readonly key: string; readonly message: JsonRecord }
  /** Any other request: its id is in flight until the server answers it. */
  | { readonly code: "request"; readonly id: Json; readonly key: string }
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
    const name = isRecord(params) ? recordableName(params["name"]) : undefined;
    const key = idKeyOf(element);
    if (key === undefined) return { code: "call_notification", name, message: element };
    const id = element["id"] ?? null;
    return name === undefined ? { code: "malformed_call", id, key, message: element } : { code: "call", id, key, name, message: element };
  }
  if (method === "tools/list") {
    const key = idKeyOf(element);
    if (key === undefined) return { code: "other" };
    const params = element["params"];
    return { code: "list_tools", id: element["id"] ?? null, key, continued: isRecord(params) && params["cursor"] !== undefined };
  }
  if (method === "notifications/cancelled") {
    const params = element["params"];
    if (!isRecord(params)) return { code: "cancel", requestKey: undefined, reason: undefined };
    const requestId = params["requestId"];
    const reason = params["reason"];
    return {
      code: "cancel",
      requestKey: keyOf(requestId),
      reason: typeof reason === "string" ? reason : undefined,
    };
  }
  const key = idKeyOf(element);
  return key === undefined ? { code: "other" } : { code: "request", id: element["id"] ?? null, key };
}

/**
 * Whether a request names its protocol revision in `params._meta`, as every request of MCP
 * 2026-07-28 and later does (`io.modelcontextprotocol/protocolVersion`): a result answering
 * it must then say `resultType`.
 */
export function namesRevision(message: JsonRecord): boolean {
  const params = message["params"];
  const meta = isRecord(params) ? params["_meta"] : undefined;
  return isRecord(meta) && typeof meta["io.modelcontextprotocol/protocolVersion"] === "string";
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
  /**
   * An answer that can pair with no request: it has `result` or `error` and no id (or
   * `null`), or it has a `method` too, which one client takes for an answer and another for
   * a request (the MCP SDKs check for an answer first).
   */
  | { readonly code: "unpaired"; readonly why: "no_id" | "method_and_answer" }
  /** The server asking the client for its roots. */
  | { readonly code: "roots_request"; readonly key: string }
  | { readonly code: "other" };

export function classifyServer(element: Json): ServerElement {
  if (!isRecord(element)) return { code: "other" };
  const key = idKeyOf(element);
  if (Object.hasOwn(element, "result") || Object.hasOwn(element, "error")) {
    if (Object.hasOwn(element, "method")) return { code: "unpaired", why: "method_and_answer" };
    return key === undefined ? { code: "unpaired", why: "no_id" } : { code: "response", key, message: element };
  }
  if (key !== undefined && element["method"] === "roots/list") return { code: "roots_request", key };
  return { code: "other" };
}

/**
 * The roots in a client's answer to `roots/list`: a `file://` URI as its path, any other
 * URI as it is written (server-filesystem takes one that is not `file://` for a path).
 * Undefined when the answer holds no list of roots.
 */
export function rootsOf(message: JsonRecord): string[] | undefined {
  const result = message["result"];
  if (!isRecord(result) || !Array.isArray(result["roots"])) return undefined;
  const roots: string[] = [];
  for (const root of result["roots"] as readonly Json[]) {
    if (!isRecord(root) || typeof root["uri"] !== "string") continue;
    const uri = root["uri"];
    try {
      roots.push(uri.startsWith("file:") ? fileURLToPath(uri) : uri);
    } catch {
      // A file URI with a host or a bad escape names no local path; it still is a root the client named.
      roots.push(uri);
    }
  }
  return roots;
}
