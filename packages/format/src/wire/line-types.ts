import type { RecordWriterOptions } from "../write/writer-options.js";
import type { KeyId, LineHash, PolicySetHash, PrevHash, RequestDigest, ResponseDigest, ToolSpecDigest } from "./digest.js";

/**
 * The wire model of schema version 2 (SPEC §5). Field names are the wire names. Optional
 * members are absent, never `undefined` on the wire and never `null` (SPEC §3.2).
 */

/** The `schema_version` the writer puts on every Line (SPEC §12); a verifier judges neither its value nor its presence (SPEC §5.1). */
export const SCHEMA_VERSION = 2;

/** One of the six `line_type` values SPEC §5.1 defines, the reserved `checkpoint` included. */
export type KnownLineType = "open" | "intent" | "outcome" | "decision" | "close" | "checkpoint";
/** The line types this build understands (SPEC §5.1). */
const KNOWN_LINE_TYPES: readonly KnownLineType[] = ["open", "intent", "outcome", "decision", "close", "checkpoint"];

/** A `line_type` token: a known type, or a newer emitter's token kept verbatim (SPEC §5.2). */
export type LineType = { readonly code: "known"; readonly token: KnownLineType } | { readonly code: "unknown"; readonly token: string };

// One object a known type, made once: the verifier classifies every Line (ADR 0027). Frozen,
// since every `onLine` consumer is handed the same one.
const KNOWN: ReadonlyMap<string, LineType> = new Map(KNOWN_LINE_TYPES.map((token) => [token, Object.freeze({ code: "known", token })]));

/** Classify a `line_type` string: known, or unknown and kept exactly as written, for the verdict to name (SPEC §5.2). */
export function lineTypeOf(token: string): LineType {
  return KNOWN.get(token) ?? { code: "unknown", token };
}

/** 128 lowercase hex: a 64-byte Ed25519 signature. */
export type SignatureHex = string & { readonly __signatureHex: unique symbol };
/** 64 lowercase hex: a 32-byte Ed25519 public key. */
export type PublicKeyHex = string & { readonly __publicKeyHex: unique symbol };

/** File-system access in a grant or an approved scope (SPEC §5.3); both lists are always present. */
export interface FsGrant {
  /** Paths the Call may read. */
  readonly read_paths: readonly string[];
  /** Paths the Call may write. */
  readonly write_paths: readonly string[];
}
/** One HTTP host a grant or an approved scope lets a Call reach (SPEC §5.3). */
export interface HttpGrant {
  /** The host name. */
  readonly host: string;
  /** The ports allowed on it. */
  readonly ports: readonly number[];
  /** The HTTP methods allowed; wrap's approved scopes hold `*`, as wrap sees no method (SPEC §17.5). */
  readonly methods: readonly string[];
}
/** Network access in a grant or an approved scope (SPEC §5.3). */
export interface NetGrant {
  /** The HTTP hosts a Call may reach. */
  readonly http: readonly HttpGrant[];
}
/** The authority a Call ran under, as the capability station granted it: the grant `G` of SPEC §5.3. */
export interface CapabilityGrant {
  /** Names the grant; the outcome's `grant_id` repeats it. */
  readonly grant_id: string;
  /** The tool the grant is for. */
  readonly tool_id: string;
  /** File-system access; absent when the grant gives none. */
  readonly fs?: FsGrant;
  /** Network access; absent when the grant gives none. */
  readonly net?: NetGrant;
  /** Ceiling on the Call's memory, in bytes. */
  readonly max_memory_bytes: number;
  /** Ceiling on the Call's wall-clock time, in milliseconds. */
  readonly max_wall_ms: number;
  /** Ceiling on the Call's output, in bytes. */
  readonly max_output_bytes: number;
}

/** The policy station's verdict (SPEC §5.3, `outcome.policy`). */
export type PolicyOutcome =
  | { readonly status: "allowed" }
  | { readonly status: "denied"; readonly reason: string }
  | { readonly status: "rate_limited"; readonly reason: string }
  | { readonly status: "pending_approval"; readonly approval_id: string };

/**
 * The capability station's verdict (SPEC §5.3, `outcome.capability`): the grant the Call ran
 * under, or why it got none, with the capability refused when one is named.
 */
export type CapabilityOutcome =
  { readonly status: "granted"; readonly grant: CapabilityGrant } | { readonly status: "denied"; readonly reason: string; readonly denied_capability?: string };

/** How the Call's execution ended (SPEC §5.3, `outcome.execution`). */
export type ExecutionOutcome =
  /** The tool ran and returned. */
  | { readonly status: "success" }
  /** The tool or its host failed; `message` says how (`host panic during tool call` when a `call()` body throws). */
  | { readonly status: "trap"; readonly message: string }
  /** A limit stopped it; `kind` is `wall_clock`, `fuel`, `memory` or `output` today. */
  | { readonly status: "resource_exceeded"; readonly kind: string }
  /** The host did not run it, or did not see it end; `reason` says which (`session abandoned`, `not executed`). */
  | { readonly status: "host_denied"; readonly reason: string };

/** The inputs a verdict turned on (SPEC §5.3). Always present on an outcome, possibly `{}`. */
export interface DecisionAxes {
  /** The capability the Call asked for, e.g. `fs.read`. */
  readonly capability?: string;
  /** The caller's asserted role. */
  readonly role?: string;
  /** The policy's session scope; not the record's Session. */
  readonly session?: string;
  /** The `id` of the rule that decided; absent when no rule did. */
  readonly matched_rule?: string;
  /** The `approval_id` a resumed Call ran under. */
  readonly approval_ref?: string;
  /** The one path the Call resolved to, as given and canonicalized; absent unless there was exactly one. */
  readonly fs?: { readonly path_raw: string; readonly path_canonical: string };
  /** The one endpoint the Call resolved to; absent unless there was exactly one. */
  readonly net?: { readonly host: string; readonly port: number };
}

/** The authority an approval granted; it rides inside `approved` so it cannot be left out. */
export interface ApprovedScope {
  /** The tool the approval lets run. */
  readonly tool_id: string;
  /** The paths it covers; absent when none were resolved. */
  readonly fs?: FsGrant;
  /** The endpoint it covers; absent when none was named. */
  readonly net?: NetGrant;
}

/** A human's answer to a parked Call (SPEC §5.3, `decision.verdict`): approved with the scope granted, or denied with a reason. */
export type ApprovalVerdict = { readonly verdict: "approved"; readonly scope: ApprovedScope } | { readonly verdict: "denied"; readonly reason: string };

/**
 * aegis-ts extension (SPEC §14.11): a read of Envelope bytes, as `aegis envelope get --audit`
 * records it in an access record: which digest, why, and who. The Call's request is this
 * object: its `request_digest` is the SHA-256 of its canonical form (SPEC §3).
 */
export interface EnvelopeAccess {
  /** The digest whose bytes were asked for (64 lowercase hex). */
  readonly digest: string;
  /** Why, as the reader gave it (`--reason`). */
  readonly reason: string;
  /** The operating-system user the reader ran as, by name (`uid <n>` when the name cannot be found). */
  readonly os_user: string;
  /** The `key_id` of the key the reader signs the access record with. */
  readonly reader_key_id: KeyId;
}

/** What a caller supplies for an `intent`: everything but the chain fields. */
export interface IntentPayload {
  /** Pairs the intent with its Call's outcome (SPEC §5.3). */
  readonly call_id: string;
  /** The tool being called. */
  readonly tool_id: string;
  /** SHA-256 of the verbatim request bytes (SPEC §9). */
  readonly request_digest: RequestDigest;
  /**
   * aegis-ts extension (SPEC §14.11): a read of Envelope bytes this Call records; the writer
   * repeats it on the Call's outcome. A verifier that does not know it ignores it and hashes it.
   */
  readonly envelope_access?: EnvelopeAccess;
}

/** What a caller supplies for an `outcome` (SPEC §5.3). */
export interface OutcomePayload {
  /** As in the Call's intent. */
  readonly call_id: string;
  /** As in the Call's intent. */
  readonly tool_id: string;
  /** As in the Call's intent. */
  readonly request_digest: RequestDigest;
  /** The Policy Set that governed the Call (SPEC §6). */
  readonly policy_set_hash: PolicySetHash;
  /** The policy station's verdict. */
  readonly policy: PolicyOutcome;
  /** The capability station's verdict. */
  readonly capability: CapabilityOutcome;
  /** How execution ended. */
  readonly execution: ExecutionOutcome;
  /** The grant the Call ran under; absent when it ran under none. */
  readonly grant_id?: string;
  /** SHA-256 of the verbatim response bytes; absent when there were none, or a cap refused the output. */
  readonly response_digest?: ResponseDigest;
  /** How long the Call took, in milliseconds; absent when nothing ran. */
  readonly wall_ms?: number;
  /** Peak memory the Call used, in bytes (wrap writes 0: not measured); absent when nothing ran. */
  readonly peak_memory_bytes?: number;
  /** What the verdict turned on, so it can be re-evaluated from the record; always present, possibly empty. */
  readonly decision_axes: DecisionAxes;
  /**
   * aegis-ts extension (SPEC §17.6): the digest of the tool's definition as the server
   * listed it before the call. A verifier that does not know it ignores it and hashes it.
   */
  readonly tool_spec_digest?: ToolSpecDigest;
  /** aegis-ts extension (SPEC §14.11): as on the Call's intent. */
  readonly envelope_access?: EnvelopeAccess;
  /**
   * aegis-ts extension (SPEC §17.2): the `call_id` of the Call, earlier in the Session, that
   * this Call continues: a `tools/call` the server answered by asking the client for input
   * (MCP 2026-07-28), made again with the answers. A verifier that does not know it ignores
   * it and hashes it.
   */
  readonly continues_call?: string;
}

/** What a caller supplies for a `decision`: a human's answer to a parked Call (SPEC §5.3). */
export interface DecisionPayload {
  /** The park this answers: a `pending_approval` outcome's `approval_id`. A second answer makes the file Tampered (SPEC §8.2). */
  readonly approval_id: string;
  /** Approved, with the scope granted, or denied, with a reason. */
  readonly verdict: ApprovalVerdict;
}

/** What an `open` carries beyond the header (SPEC §5.3); the writer fills it in when it opens a file. */
export interface OpenPayload {
  /** The key every signed Line of the Session is signed under (SPEC §8.4). */
  readonly public_key: PublicKeyHex;
  /** `line_hash` of the file's last Line before this Session; absent only when the file held none (SPEC §7). */
  readonly prev_session_tail?: LineHash;
  /**
   * aegis-ts (SPEC §17.11): the confinement `aegis wrap --confine` held the server in for the
   * whole Session. A verifier that does not know it ignores it and hashes it.
   */
  readonly confinement?: Confinement;
}

/** What a confined server was granted, and how it was held (SPEC §17.11): as a writer is given it. */
export type Confinement = NonNullable<RecordWriterOptions["confinement"]>;

/** The members every Line carries (SPEC §5). */
export interface LineHeader<T extends string> {
  /** `2` on every Line written; a verifier does not judge it (SPEC §5.1). */
  readonly schema_version: typeof SCHEMA_VERSION;
  /** What kind of Line this is, which decides its other members (SPEC §5.3). */
  readonly line_type: T;
  /** Position within the Session, from 0 at its `open` (SPEC §4). */
  readonly seq: number;
  /** `line_hash` of the previous Line in the Session, or 64 zeros on an `open` (SPEC §4). */
  readonly prev_hash: PrevHash;
  /**
   * aegis-ts extension (SPEC §13.7): when the writer appended the Line, by its own clock,
   * as RFC 3339 in UTC with milliseconds (`2026-12-03T21:30:27.123Z`). Signed with the rest;
   * it says when the writer claims, no more. Absent from the reference's Lines.
   */
  readonly time?: string;
}

/** The members a signed Line adds (SPEC §4, §8.4). */
export interface SignatureBlock {
  /** SHA-256 of the Session's public key; inside the signing input, so a signature cannot be replayed under another id. */
  readonly key_id: KeyId;
  /** Ed25519 over the signing input: the Line's canonical form without `signature` (SPEC §4). */
  readonly signature: SignatureHex;
}

/** An `open` Line: the first of a Session, publishing the Session's key and signed with it (SPEC §5.3). */
export type OpenLine = LineHeader<"open"> & OpenPayload & SignatureBlock;
/** An `intent` Line: written and made durable before a Call runs; never signed (SPEC §5.1). */
export type IntentLine = LineHeader<"intent"> & IntentPayload;
/** An `outcome` Line: how a Call ended, one per Call on every exit path; signed. */
export type OutcomeLine = LineHeader<"outcome"> & OutcomePayload & SignatureBlock;
/** A `decision` Line: a human's answer to a parked Call; signed. */
export type DecisionLine = LineHeader<"decision"> & DecisionPayload & SignatureBlock;
/** A `close` Line: the last of a Session, written when the writer closes; signed (SPEC §7). */
export type CloseLine = LineHeader<"close"> & SignatureBlock;

/**
 * What a writer appends and signs. `intent` has no signing path: the signed kinds are exactly
 * those a {@link SignedPayload} can name (SPEC §5.1).
 */
export type SignedPayload =
  | { readonly line_type: "open"; readonly payload: OpenPayload }
  | { readonly line_type: "outcome"; readonly payload: OutcomePayload }
  | { readonly line_type: "decision"; readonly payload: DecisionPayload }
  | { readonly line_type: "close"; readonly payload: Record<string, never> };
