import { canonicalJson } from "./canonical-json.js";
import type { Json } from "./message.js";

/**
 * The one frame wrap authors (SPEC §17.3, the reference's ADR 0015): a JSON-RPC error
 * answering a `tools/call` that never reached the server. `error.code`, `error.message` and
 * `data.aegis.layer` never vary, so a client can be written against them; members are in
 * sorted order, as the reference writes them.
 */
export const REFUSAL_CODE = -32042;
/** The `error.message` of every refusal (SPEC §17.3): it never varies. */
export const REFUSAL_MESSAGE = "aegis wrap refused this tools/call";

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

/** What aegis-ts adds inside `data.aegis`: the rule, the reason, the park's id. */
export interface RefusalDetail {
  /** The `id` of the Policy Set's rule that decided; absent when the set's default did, or no rule was involved. */
  readonly rule?: string;
  /** Why, in words: the Policy Set's reason, or wrap's own. */
  readonly reason?: string;
  /** The park's id, to approve or deny with `aegis approve`: only for `PENDING_APPROVAL`. */
  readonly approval_id?: string;
}

/** One refused request, before it is written as a JSON-RPC error: what the client is answered. */
export interface Refusal {
  /** The refused request's `id`, echoed as read; `null` when its frame could not be read. */
  readonly id: Json;
  /** `data.aegis.code`: why it was refused. */
  readonly code: RefusalCode;
  /** What aegis-ts adds inside `data.aegis`. */
  readonly detail: RefusalDetail;
}

export function refusalMessage(refusal: Refusal): { readonly [key: string]: Json } {
  const aegis: Record<string, Json> = { layer: "wrap", code: refusal.code };
  if (refusal.detail.rule !== undefined) aegis["rule"] = refusal.detail.rule;
  if (refusal.detail.reason !== undefined) aegis["reason"] = refusal.detail.reason;
  if (refusal.detail.approval_id !== undefined) aegis["approval_id"] = refusal.detail.approval_id;
  return { jsonrpc: "2.0", id: refusal.id, error: { code: REFUSAL_CODE, message: REFUSAL_MESSAGE, data: { aegis } } };
}

/**
 * The bytes answering a refused frame, without the `\n`: one object for an object, one
 * array for a batch (the client gets back the shape it sent).
 */
export function refusalFrame(refusals: readonly Refusal[], batch: boolean): Buffer {
  const messages = refusals.map(refusalMessage);
  const value: Json = batch ? messages : (messages[0] ?? null);
  // An id with a lone surrogate has no canonical form; it is still echoed as it was read.
  return Buffer.from(canonicalJson(value) ?? JSON.stringify(value), "utf8");
}
