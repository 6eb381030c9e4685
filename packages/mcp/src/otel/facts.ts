import { tryParseDigest } from "@aegis/format/internal";
import type { EnvelopeSource } from "@aegis/envelope";
import { isRecord, type Json, type JsonRecord } from "../message.js";
import { readFrame } from "../strict-frame.js";
import { parseTraceparent, type SpanRef } from "./ids.js";
import type { CallRecord } from "./follow.js";

/**
 * What a span takes from a call's verbatim request and response bytes (the Envelope's, or
 * the relay's as they pass), read with the relay's one strict reader (SPEC §17.1): a frame
 * it refuses, or a batch, gives nothing, never a guess (SPEC Appendix A.3).
 */

/** What a request says of itself, when it is one JSON-RPC object. */
export interface RequestFacts {
  /** `method`, when a string: `mcp.method.name`. */
  readonly method?: string;
  /** The id's JSON text (SPEC §17.2's id key), to pair the response with. */
  readonly idKey?: string;
  /** The id as `jsonrpc.request.id` writes it: a string as it is, a number in decimal. */
  readonly requestId?: string;
  /** The parent a W3C `traceparent` in `params._meta` names. */
  readonly parent?: SpanRef;
  /** `params.arguments` as JSON text: only ever exported when asked for (it may hold secrets). */
  readonly arguments?: string;
}

/** What a response says of the call, when it is a JSON-RPC answer to it. */
export interface ResponseFacts {
  /** `error.code` of a JSON-RPC error answer, in decimal. */
  readonly errorCode?: string;
  /** `error.message` of a JSON-RPC error answer. */
  readonly errorMessage?: string;
  /** `result.isError` was `true`: MCP's tool error, in a successful answer. */
  readonly toolError: boolean;
  /** `result` as JSON text: only ever exported when asked for. */
  readonly result?: string;
}

/** What the span of a call may carry beyond its Lines. */
export interface CallFacts {
  readonly request?: RequestFacts;
  readonly response?: ResponseFacts;
  /** Put the call's arguments and result on its span (`gen_ai.tool.call.arguments`, `.result`): opt-in, they may hold secrets. */
  readonly content?: boolean;
}

/** The facts of a request's bytes; none when they are not one JSON-RPC object. */
export function requestFacts(bytes: Uint8Array): RequestFacts {
  const message = objectOf(bytes);
  if (message === undefined) return {};
  const id = message["id"];
  const params = message["params"];
  const meta = isRecord(params) ? params["_meta"] : undefined;
  const parent = isRecord(meta) ? parseTraceparent(meta["traceparent"]) : undefined;
  const args = isRecord(params) && Object.hasOwn(params, "arguments") ? params["arguments"] : undefined;
  return {
    ...(typeof message["method"] === "string" ? { method: message["method"] } : {}),
    ...(typeof id === "string" || typeof id === "number" ? { idKey: JSON.stringify(id), requestId: typeof id === "string" ? id : String(id) } : {}),
    ...(parent === undefined ? {} : { parent }),
    ...(args === undefined ? {} : { arguments: JSON.stringify(args) }),
  };
}

/**
 * The facts of a response's bytes for the request whose id key is `idKey`: the answer itself,
 * or in a batch the element that answers it; none when nothing in them answers it.
 */
export function responseFacts(bytes: Uint8Array, idKey: string | undefined): ResponseFacts {
  const reading = readFrame(bytes);
  if (!reading.ok || idKey === undefined) return { toolError: false };
  const answers = Array.isArray(reading.value) ? (reading.value as readonly Json[]) : [reading.value];
  const answer = answers.find((a): a is JsonRecord => isRecord(a) && Object.hasOwn(a, "id") && JSON.stringify(a["id"]) === idKey);
  if (answer === undefined) return { toolError: false };
  const error = answer["error"];
  if (isRecord(error)) {
    const code = error["code"];
    const message = error["message"];
    return {
      toolError: false,
      ...(typeof code === "number" ? { errorCode: String(code) } : {}),
      ...(typeof message === "string" ? { errorMessage: message } : {}),
    };
  }
  const result = answer["result"];
  if (result === undefined) return { toolError: false };
  return { toolError: isRecord(result) && result["isError"] === true, result: JSON.stringify(result) };
}

function objectOf(bytes: Uint8Array): JsonRecord | undefined {
  const reading = readFrame(bytes);
  return reading.ok && isRecord(reading.value) ? reading.value : undefined;
}

/**
 * What a call's span takes from the Envelope (SPEC Appendix A.3): its request and its response,
 * each read only when the Envelope holds the bytes the record names (re-hashed as they are
 * read). Without an Envelope, only whether the span carries content.
 */
export async function callFacts(call: CallRecord, envelope: EnvelopeSource | undefined, content: boolean): Promise<CallFacts> {
  if (envelope === undefined) return { content };
  const request = await bytesOf(envelope, call.requestDigest);
  const requestRead = request === undefined ? undefined : requestFacts(request);
  const responseDigest = call.outcome?.line.response_digest;
  const response = responseDigest === undefined ? undefined : await bytesOf(envelope, responseDigest);
  return {
    content,
    ...(requestRead === undefined ? {} : { request: requestRead }),
    ...(response === undefined ? {} : { response: responseFacts(response, requestRead?.idKey) }),
  };
}

/** The bytes the Envelope holds for `digest`, re-hashed; undefined when missing, redacted or altered. */
async function bytesOf(envelope: EnvelopeSource, digest: string): Promise<Uint8Array | undefined> {
  const parsed = tryParseDigest("RequestDigest", digest);
  if (!parsed.ok) return undefined;
  const read = await envelope.get(parsed.digest);
  return read.code === "present" ? read.bytes : undefined;
}
