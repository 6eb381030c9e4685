import { realpath } from "node:fs/promises";
import { userInfo } from "node:os";
import {
  RecordWriter,
  RecordWriterError,
  PolicySetHash,
  RequestDigest,
  ResponseDigest,
  type CallResult,
  type DecisionAxes,
  type EnvelopeAccess,
  type EnvelopeRead,
  type SigningKey,
} from "@aegis/format";
import { canonicalize, unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { CliError } from "../fault.js";

/** The tool an access record names for every read (SPEC §14.11). */
const ACCESS_TOOL = "aegis.envelope.get";

/** `SHA-256("aegis-envelope-access-v0")`: no Policy Set decides a read; this stand-in names none (SPEC §14.11). */
const ACCESS_POLICY_SET_HASH: PolicySetHash = PolicySetHash.of("aegis-envelope-access-v0");

const CALL_ID = "call-1";

/** One read of Envelope bytes, begun in an access record: its intent is durable. */
export interface AccessCall {
  /** Record how the read ended (the outcome, durable), then close the Session. */
  end(how: AccessEnd): Promise<void>;
}

/** How a read ended: what the Envelope answered, or why it could not be asked. */
type AccessEnd = { readonly code: "answered"; readonly read: EnvelopeRead } | { readonly code: "failed"; readonly detail: string };

/** The operating-system user this process runs as, by name; `uid <n>` when the name cannot be found. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

/**
 * SPEC §14.11: open the access record (a new Session, signed with `key`) and make the read's
 * intent durable, before a byte of the Envelope is read. The request is the
 * `envelope_access` object, and `request_digest` the SHA-256 of its canonical form.
 */
export async function beginAccess(options: {
  readonly audit: string;
  readonly key: SigningKey;
  readonly digest: string;
  readonly reason: string;
  readonly envelope: string;
}): Promise<AccessCall> {
  const access: EnvelopeAccess = { digest: options.digest, reason: options.reason, os_user: osUser(), reader_key_id: options.key.keyId };
  // The Envelope's path, as given and resolved, is what the read touched (`aegis show --path` finds it).
  const resolved = await realpath(options.envelope).catch(() => undefined);
  const decision_axes: DecisionAxes = {
    capability: "envelope.read",
    ...(resolved === undefined ? {} : { fs: { path_raw: options.envelope, path_canonical: resolved } }),
  };
  const writer = await writerFaults(() => RecordWriter.open(options.audit, { key: options.key }));
  try {
    await writerFaults(() =>
      writer.beginCall({
        call_id: CALL_ID,
        tool_id: ACCESS_TOOL,
        request_digest: RequestDigest.of(new TextEncoder().encode(canonicalize(access))),
        policy_set_hash: ACCESS_POLICY_SET_HASH,
        envelope_access: access,
      }),
    );
  } catch (error) {
    await writer.close().catch(() => undefined);
    throw error;
  }
  const started = performance.now();
  return {
    async end(how: AccessEnd): Promise<void> {
      const result = outcomeOf(how, decision_axes, Math.round(performance.now() - started));
      try {
        await writerFaults(() => writer.endCall(CALL_ID, result));
      } finally {
        await writerFaults(() => writer.close());
      }
    },
  };
}

/** The outcome of a read: served (its bytes hash to the digest, which the outcome names as its response), or why not. */
function outcomeOf(how: AccessEnd, decision_axes: DecisionAxes, wall_ms: number): CallResult {
  const refused = (message: string): CallResult => ({
    policy: { status: "allowed" },
    capability: { status: "granted", grant: grant() },
    execution: { status: "trap", message },
    decision_axes,
    grant_id: grant().grant_id,
    wall_ms,
  });
  if (how.code === "failed") return refused(`the Envelope could not be read: ${how.detail}`);
  return match(how.read)
    .with({ code: "present" }, (r): CallResult => ({
      policy: { status: "allowed" },
      capability: { status: "granted", grant: grant() },
      execution: { status: "success" },
      decision_axes,
      grant_id: grant().grant_id,
      response_digest: ResponseDigest.of(r.bytes),
      wall_ms,
    }))
    .with({ code: "missing" }, () => refused("missing: the Envelope holds no bytes and no tombstone for it"))
    .with({ code: "redacted" }, (r) => refused(`redacted at ${r.redactedAt}: ${r.reason}`))
    .with({ code: "digest_mismatch" }, (r) => refused(`digest_mismatch: the stored bytes hash to ${r.found}`))
    .exhaustive(unmatched);
}

/** The reference's `deny_all` shape, as wrap's pass-through: the read mints no authority, and the record says so. */
function grant() {
  return { grant_id: `aegis-envelope-get-${CALL_ID}`, tool_id: ACCESS_TOOL, max_memory_bytes: 0, max_wall_ms: 0, max_output_bytes: 0 };
}

async function writerFaults<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof RecordWriterError) throw new CliError({ code: "writer", fault: error.fault });
    throw error;
  }
}
