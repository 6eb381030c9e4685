import type { KeyId, LineHash, PolicySetHash, PrevHash, RequestDigest, ResponseDigest, ToolSpecDigest } from "./digest.js";

/**
 * The wire model of schema version 2 (SPEC §5). Field names are the wire names. Optional
 * members are absent, never `undefined` on the wire and never `null` (SPEC §3.2).
 */

export const SCHEMA_VERSION = 2;

/** The line types this build understands (SPEC §5.1). */
export const KNOWN_LINE_TYPES = ["open", "intent", "outcome", "decision", "close", "checkpoint"] as const;
export type KnownLineType = (typeof KNOWN_LINE_TYPES)[number];

/** A `line_type` token: a known type, or a newer emitter's token kept verbatim (SPEC §5.2). */
export type LineType = { readonly code: "known"; readonly token: KnownLineType } | { readonly code: "unknown"; readonly token: string };

export function lineTypeOf(token: string): LineType {
  return (KNOWN_LINE_TYPES as readonly string[]).includes(token) ? { code: "known", token: token as KnownLineType } : { code: "unknown", token };
}

/** 128 lowercase hex: a 64-byte Ed25519 signature. */
export type SignatureHex = string & { readonly __signatureHex: unique symbol };
/** 64 lowercase hex: a 32-byte Ed25519 public key. */
export type PublicKeyHex = string & { readonly __publicKeyHex: unique symbol };

export interface FsGrant {
  readonly read_paths: readonly string[];
  readonly write_paths: readonly string[];
}
export interface HttpGrant {
  readonly host: string;
  readonly ports: readonly number[];
  readonly methods: readonly string[];
}
export interface NetGrant {
  readonly http: readonly HttpGrant[];
}
export interface CapabilityGrant {
  readonly grant_id: string;
  readonly tool_id: string;
  readonly fs?: FsGrant;
  readonly net?: NetGrant;
  readonly max_memory_bytes: number;
  readonly max_wall_ms: number;
  readonly max_output_bytes: number;
}

/** The policy station's verdict (SPEC §5.3, `outcome.policy`). */
export type PolicyOutcome =
  | { readonly status: "allowed" }
  | { readonly status: "denied"; readonly reason: string }
  | { readonly status: "rate_limited"; readonly reason: string }
  | { readonly status: "pending_approval"; readonly approval_id: string };

export type CapabilityOutcome =
  { readonly status: "granted"; readonly grant: CapabilityGrant } | { readonly status: "denied"; readonly reason: string; readonly denied_capability?: string };

export type ExecutionOutcome =
  | { readonly status: "success" }
  | { readonly status: "trap"; readonly message: string }
  | { readonly status: "resource_exceeded"; readonly kind: string }
  | { readonly status: "host_denied"; readonly reason: string };

/** The inputs a verdict turned on (SPEC §5.3). Always present on an outcome, possibly `{}`. */
export interface DecisionAxes {
  readonly capability?: string;
  readonly role?: string;
  readonly session?: string;
  readonly matched_rule?: string;
  readonly approval_ref?: string;
  readonly fs?: { readonly path_raw: string; readonly path_canonical: string };
  readonly net?: { readonly host: string; readonly port: number };
}

/** The authority an approval granted; it rides inside `approved` so it cannot be left out. */
export interface ApprovedScope {
  readonly tool_id: string;
  readonly fs?: FsGrant;
  readonly net?: NetGrant;
}

export type ApprovalVerdict = { readonly verdict: "approved"; readonly scope: ApprovedScope } | { readonly verdict: "denied"; readonly reason: string };

/** What a caller supplies for an `intent`: everything but the chain fields. */
export interface IntentPayload {
  readonly call_id: string;
  readonly tool_id: string;
  readonly request_digest: RequestDigest;
}

/** What a caller supplies for an `outcome` (SPEC §5.3). */
export interface OutcomePayload {
  readonly call_id: string;
  readonly tool_id: string;
  readonly request_digest: RequestDigest;
  readonly policy_set_hash: PolicySetHash;
  readonly policy: PolicyOutcome;
  readonly capability: CapabilityOutcome;
  readonly execution: ExecutionOutcome;
  readonly grant_id?: string;
  readonly response_digest?: ResponseDigest;
  readonly wall_ms?: number;
  readonly peak_memory_bytes?: number;
  readonly decision_axes: DecisionAxes;
  /**
   * aegis-ts extension (SPEC §17.6): the digest of the tool's definition as the server
   * listed it before the call. A verifier that does not know it ignores it and hashes it.
   */
  readonly tool_spec_digest?: ToolSpecDigest;
}

export interface DecisionPayload {
  readonly approval_id: string;
  readonly verdict: ApprovalVerdict;
}

export interface OpenPayload {
  readonly public_key: PublicKeyHex;
  readonly prev_session_tail?: LineHash;
}

/** The members every Line carries (SPEC §5). */
export interface LineHeader<T extends string> {
  readonly schema_version: typeof SCHEMA_VERSION;
  readonly line_type: T;
  readonly seq: number;
  readonly prev_hash: PrevHash;
}

export interface SignatureBlock {
  readonly key_id: KeyId;
  readonly signature: SignatureHex;
}

export type OpenLine = LineHeader<"open"> & OpenPayload & SignatureBlock;
export type IntentLine = LineHeader<"intent"> & IntentPayload;
export type OutcomeLine = LineHeader<"outcome"> & OutcomePayload & SignatureBlock;
export type DecisionLine = LineHeader<"decision"> & DecisionPayload & SignatureBlock;
export type CloseLine = LineHeader<"close"> & SignatureBlock;

/**
 * What a writer appends. `intent` has no signing path: the signed kinds are exactly
 * those a {@link SignedPayload} can name (SPEC §5.1).
 */
export type SignedPayload =
  | { readonly line_type: "open"; readonly payload: OpenPayload }
  | { readonly line_type: "outcome"; readonly payload: OutcomePayload }
  | { readonly line_type: "decision"; readonly payload: DecisionPayload }
  | { readonly line_type: "close"; readonly payload: Record<string, never> };
