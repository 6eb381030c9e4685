import { RecordReadError, describeVerdict, readVerifying, type EnvelopeRead, type Verification } from "@aegis/format";
import { describeIoError, unmatched } from "@aegis/format/internal";
import type { EnvelopeSource } from "@aegis/envelope";
import { checkRecordAgainst } from "@aegis/envelope/internal";
import { describeRecheckLine, recheckRecord, type PolicySet, type RecheckVerdict } from "@aegis/policy";
import { explainIndeterminate } from "@aegis/policy/internal";
import { verifyWithCheckpoints, type GivenCheckpoint } from "@aegis/proof";
import { match } from "ts-pattern";
import { describeFinding } from "../checkpoint-finding.js";
import { CliError } from "../fault.js";
import type { CheckpointData, EnvelopeData, HeldEntry, RecheckData, RecheckedCall } from "./data.js";

/** The record's verdict as this process reaches it, and the recheck of its calls on the way. */
export async function verifyAndRecheck(
  path: string,
  shown: string,
  keys: readonly string[],
  policy: { readonly set: PolicySet; readonly name: string } | undefined,
  envelope: EnvelopeSource | undefined,
): Promise<{ readonly verification: Verification; readonly recheck: RecheckData | null }> {
  const read = readVerifying(path, keys.length > 0 ? { trust: keys } : {});
  const calls: RecheckedCall[] = [];
  try {
    if (policy === undefined) for await (const row of read.rows) void row;
    else {
      const verdicts = recheckRecord(read.rows, { code: "policy", policy: policy.set }, envelope === undefined ? {} : { envelope: (d) => envelope.get(d) });
      for await (const verdict of verdicts) calls.push(recheckedCall(verdict));
    }
    const verification = await read.verification();
    return { verification, recheck: policy === undefined ? null : { policy: policy.name, policy_set_hash: policy.set.hash, calls } };
  } catch (error) {
    if (error instanceof RecordReadError) throw new CliError({ code: "unreadable_record", path: shown, detail: describeIoError(error.cause) });
    throw error;
  }
}

function recheckedCall(verdict: RecheckVerdict): RecheckedCall {
  const rule = verdict.now === undefined || verdict.now.kind === "default" ? null : verdict.now.id;
  return {
    line: verdict.line,
    code: verdict.code,
    text: describeRecheckLine(verdict).replace(/^[^:]*: /, ""),
    why: verdict.code === "indeterminate" ? explainIndeterminate(verdict.reason) : null,
    rule,
  };
}

/**
 * What the Envelope holds for each digest the record's calls name. Present bytes travel in
 * the page up to {@link EMBEDDED_ENVELOPE_BYTES} in all; past that a present entry says so
 * and carries none (`aegis show --envelope` gives them).
 */
export async function envelopeData(path: string, source: EnvelopeSource, name: string, damage: readonly string[]): Promise<EnvelopeData> {
  const digests: Record<string, HeldEntry> = {};
  let embedded = 0;
  // The digests `aegis envelope verify` asks for, tool definitions included, counted as it
  // counts them: the page's summary must be that command's.
  const tally = await checkRecordAgainst(path, source, ({ reference, read }) => {
    if (reference.part === "tool_spec" || Object.hasOwn(digests, reference.digest)) return;
    const held = heldEntry(read, EMBEDDED_ENVELOPE_BYTES - embedded);
    if (held.status === "present" && held.base64 !== null) embedded += held.size;
    digests[reference.digest] = held;
  });
  return { source: name, digests, tally, damage };
}

const EMBEDDED_ENVELOPE_BYTES = 64 * 1024 * 1024;

function heldEntry(read: EnvelopeRead, room: number): HeldEntry {
  return match(read)
    .with({ code: "present" }, (r): HeldEntry => ({
      status: "present",
      size: r.bytes.length,
      base64: r.bytes.length <= room ? Buffer.from(r.bytes).toString("base64") : null,
    }))
    .with({ code: "missing" }, (): HeldEntry => ({ status: "missing" }))
    .with({ code: "redacted" }, (r): HeldEntry => ({ status: "redacted", redacted_at: r.redactedAt, reason: r.reason }))
    .with({ code: "digest_mismatch" }, (r): HeldEntry => ({ status: "altered", found: r.found }))
    .exhaustive(unmatched);
}

/** The record held to its checkpoints, as `aegis verify --checkpoint` says it. */
export async function checkpointData(path: string, shown: string, keys: readonly string[], given: readonly GivenCheckpoint[]): Promise<CheckpointData> {
  try {
    const { verification, findings } = await verifyWithCheckpoints(path, given, keys.length > 0 ? { trust: keys } : {});
    return { verdict: describeVerdict(verification), findings: findings.map(describeFinding) };
  } catch (error) {
    if (error instanceof RecordReadError) throw new CliError({ code: "unreadable_record", path: shown, detail: describeIoError(error.cause) });
    throw error;
  }
}
