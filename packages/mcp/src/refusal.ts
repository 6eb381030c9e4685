import { unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { canonicalJson } from "./canonical-json.js";
import type { Json } from "./message.js";

/**
 * The frames wrap authors (SPEC §17.3): the answer to a request that never reached the
 * server. Every one of them is written by `refusalFrame`, and nowhere else.
 *
 * A JSON-RPC error's `error.code`, `error.message` and `data.aegis.layer` never vary, so a
 * client can be written against them; members are in sorted order, as the reference (its
 * ADR 0015) writes them.
 */
const REFUSAL_CODE = -32042;
/** The `error.message` of every refusal written as a JSON-RPC error (SPEC §17.3): it never varies. */
const REFUSAL_MESSAGE = "aegis wrap refused this tools/call";
/**
 * The `_meta` member of a refusal written as a tool result (SPEC §17.3): a name under a
 * reverse-DNS prefix of aegis-ts's own, as MCP asks of `_meta` keys that are not the
 * protocol's.
 */
export const REFUSAL_META_KEY = "io.github.aegis-ts/refusal";

/**
 * How a refused `tools/call` is answered (SPEC §17.3). `tool-result` (the default): a
 * `CallToolResult` with `isError: true`, which MCP hosts show to the model, and whose text
 * says what refused the call. `reference`: the Rust reference's JSON-RPC error, byte for byte
 * for the codes it has. A refusal that answers no one call (an unreadable frame, a batch) is
 * a JSON-RPC error in both.
 */
export type RefusalStyle = "tool-result" | "reference";

/** `data.aegis.code`: the reference's four, and what aegis-ts adds (SPEC §17.3). */
export type RefusalCode =
  | "POLICY_DENIED"
  | "RATE_LIMITED"
  | "PENDING_APPROVAL"
  /**
   * aegis-ts: a rule that would decide the call cannot be evaluated on it (a path or endpoint
   * not bound, or an argument matcher with no single reading), so the call is refused, fail
   * closed (SPEC §15.5), never taken for "no match".
   */
  | "POLICY_UNEVALUABLE"
  /** Not refused by policy: its batch was, or its frame could not be read (no `params.name`). */
  | "HOST_DENIED"
  /** aegis-ts: another call with this id is still in flight (MCP forbids reusing one). */
  | "DUPLICATE_REQUEST_ID"
  /** aegis-ts: the call's intent could not be made durable, so it may not run. */
  | "RECORD_FAILED"
  /** aegis-ts: the frame was longer than the relay's bound and could not be read. */
  | "FRAME_TOO_LARGE"
  /** aegis-ts: the frame could be read more than one way, or (under a Policy Set) not at all. */
  | "UNREADABLE_FRAME";

/** What aegis-ts adds to a refusal beyond its code: the rule, the reason, the park's id. */
interface RefusalDetail {
  /** The `id` of the Policy Set's rule that decided; absent when the set's default did, or no rule was involved. */
  readonly rule?: string;
  /** Why, in words: the Policy Set's reason, or wrap's own. */
  readonly reason?: string;
  /** The park's id, to approve or deny with `aegis approve`: only for `PENDING_APPROVAL`. */
  readonly approval_id?: string;
}

/** One refused request, before it is written: what the client is answered. */
export interface Refusal {
  /** The refused request's `id`, echoed as read; `null` when its frame could not be read. */
  readonly id: Json;
  /** `data.aegis.code`: why it was refused. */
  readonly code: RefusalCode;
  /** What aegis-ts adds. */
  readonly detail: RefusalDetail;
  /** The refused request is a `tools/call` of its own frame: the one kind a tool result can answer. */
  readonly call: boolean;
  /**
   * The request names its protocol revision in `params._meta` (MCP 2026-07-28 and later),
   * which requires `resultType` of every result: a tool result answering it says `complete`.
   */
  readonly revision?: boolean;
}

/**
 * The bytes answering a refused frame, without the `\n`: one message for an object, one
 * array for a batch (the client gets back the shape it sent). Written in the canonical form
 * (members sorted, no white space), as the reference writes its frame.
 */
export function refusalFrame(refusals: readonly Refusal[], batch: boolean, style: RefusalStyle): Buffer {
  const messages = refusals.map((r) => (style === "tool-result" && !batch && r.call && r.id !== null ? toolResult(r) : jsonRpcError(r, style)));
  const value: Json = batch ? messages : (messages[0] ?? null);
  // An id with a lone surrogate has no canonical form; it is still echoed as it was read.
  return Buffer.from(canonicalJson(value) ?? JSON.stringify(value), "utf8");
}

/** The facts of a refusal, as `data.aegis` (an error) or the `_meta` member (a tool result) carries them. */
function facts(refusal: Refusal): { readonly [key: string]: Json } {
  const aegis: Record<string, Json> = { layer: "wrap", code: refusal.code };
  if (refusal.detail.rule !== undefined) aegis["rule"] = refusal.detail.rule;
  if (refusal.detail.reason !== undefined) aegis["reason"] = refusal.detail.reason;
  if (refusal.detail.approval_id !== undefined) aegis["approval_id"] = refusal.detail.approval_id;
  return aegis;
}

/**
 * The JSON-RPC error. In the reference's style `data.aegis` is the reference's own, `layer`
 * and `code` and nothing else, so that its bytes are the reference's for the codes it has.
 */
function jsonRpcError(refusal: Refusal, style: RefusalStyle): { readonly [key: string]: Json } {
  const aegis = style === "reference" ? { layer: "wrap", code: refusal.code } : facts(refusal);
  return { jsonrpc: "2.0", id: refusal.id, error: { code: REFUSAL_CODE, message: REFUSAL_MESSAGE, data: { aegis } } };
}

/** A `CallToolResult` with `isError`: what the model is shown, and the facts for a program beside it. */
function toolResult(refusal: Refusal): { readonly [key: string]: Json } {
  return {
    jsonrpc: "2.0",
    id: refusal.id,
    result: {
      content: [{ type: "text", text: refusalText(refusal) }],
      isError: true,
      _meta: { [REFUSAL_META_KEY]: facts(refusal) },
      ...(refusal.revision === true ? { resultType: "complete" } : {}),
    },
  };
}

/**
 * The words of a refusal written as a tool result: what refused the call, why, that it did
 * not run, and, for a park, how it is approved and what to do then (SPEC §17.3). The model
 * reads them, so they say what it can do about the refusal.
 */
function refusalText(refusal: Refusal): string {
  const { rule, reason, approval_id: approvalId } = refusal.detail;
  const head = match(refusal.code)
    .with("POLICY_DENIED", () => "the Policy Set denied it")
    .with("RATE_LIMITED", () => "the Policy Set's rate limit for it was reached; it may be made again later")
    .with("PENDING_APPROVAL", () => "it waits for a person's approval")
    .with("POLICY_UNEVALUABLE", () => "a rule of the Policy Set could not be evaluated on it, so it is refused (fail closed)")
    .with("HOST_DENIED", () => "aegis wrap did not let it reach the server")
    .with("DUPLICATE_REQUEST_ID", () => "another request with its id is still in flight")
    .with("RECORD_FAILED", () => "the record cannot be written, and no call runs unrecorded")
    .with("FRAME_TOO_LARGE", () => "its frame was over the relay's bound")
    .with("UNREADABLE_FRAME", () => "its frame could not be read one way only")
    .exhaustive(unmatched);
  const why = [rule === undefined ? undefined : `rule ${rule}`, reason].filter((part): part is string => part !== undefined).join(": ");
  const approve =
    refusal.code === "PENDING_APPROVAL" && approvalId !== undefined
      ? ` A person approves it with \`aegis approve ${approvalId}\`; then make the same call again, with the same arguments, and it runs once.`
      : "";
  return `aegis wrap refused this tools/call (${refusal.code}): ${head}${why === "" ? "" : ` (${why})`}. The call did not run.${approve}`;
}
