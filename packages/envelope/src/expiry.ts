import { RecordReadError, describeVerdict, verifyRecord, type RequestDigest, type WalkedLine } from "@aegis/format";
import { describeIoError, detachedString, isLineTime, tryParseDigest, unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import type { EnvelopeSource } from "./source.js";
import type { EnvelopeStore } from "./store.js";
import type { RedactOutcome } from "./redaction.js";

// Expiry (SPEC §14.12): which entries the given records no longer need after a cutoff, and
// their redaction. `aegis envelope expire`, the envelope vectors' oracle and their generator
// all go through `expire`, so that a vector and the command it stands for expire alike.

/** The reason every tombstone expiry writes carries (SPEC §14.12). */
const RETENTION_REASON = "retention";

/** `--before`: `YYYY-MM-DD` (midnight UTC), or a time in UTC with a `Z`. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** The cutoff as milliseconds since the epoch, or why the text is not one. */
function parseBefore(text: string): { readonly ok: true; readonly ms: number } | { readonly ok: false; readonly detail: string } {
  const spelled = DATE.test(text) ? `${text}T00:00:00Z` : INSTANT.test(text) ? text : undefined;
  if (spelled === undefined)
    return { ok: false, detail: `a date in UTC is YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, with a Z and no other offset (got ${JSON.stringify(text)})` };
  const ms = Date.parse(spelled);
  // A day or an hour that does not exist (2026-02-30, 24:00) is refused, not rolled over.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== spelled.slice(0, 19))
    return { ok: false, detail: `${JSON.stringify(text)} is no such time` };
  return { ok: true, ms };
}

/** When a digest was last named: the latest `time` of a Line naming it, or undated (a Line naming it has none). */
const UNDATED = -1;

/** What the given records say of each digest they name, and which are to expire. */
export interface ExpiryPlan {
  /** Digests every Line naming which is dated before the cutoff, in the order the records first name them. */
  readonly expire: readonly { readonly digest: RequestDigest; readonly latest: string }[];
  /** Digests named by a Line at or after the cutoff. */
  readonly keptLater: number;
  /** Digests named by a Line with no `time` (SPEC §13.7): when is unknown, so they stay. */
  readonly keptUndated: number;
}

/** Why nothing was expired: the cutoff is not a time, or a record could not be read, or does not verify. */
export type ExpiryRefusal =
  /** `detail`: why the cutoff's text is not a time in UTC (`--before`). */
  | { readonly code: "bad_before"; readonly detail: string }
  | { readonly code: "unreadable_record"; readonly path: string; readonly detail: string }
  /** `verdict`: the verifier's line on the record (`Tampered: ...`). */
  | { readonly code: "expiry_refused"; readonly path: string; readonly verdict: string };

/**
 * SPEC §14.12: walk each record as the verifier does (it must verify), and for every digest an
 * `intent` or `outcome` names (`request_digest`, `response_digest`, `tool_spec_digest`), keep
 * the latest `time` of the Lines naming it. Memory: one map entry per digest named.
 */
async function planExpiry(
  records: readonly string[],
  beforeMs: number,
): Promise<{ readonly ok: true; readonly plan: ExpiryPlan } | { readonly ok: false; readonly refusal: ExpiryRefusal }> {
  const latest = new Map<RequestDigest, number>();
  const onLine = (line: WalkedLine): void => {
    const type = line.lineType.token;
    if (type !== "intent" && type !== "outcome") return;
    const value = line.value;
    const time = value["time"];
    const when = typeof time === "string" && isLineTime(time) ? Date.parse(time) : UNDATED;
    for (const member of ["request_digest", "response_digest", "tool_spec_digest"]) {
      const text = value[member];
      if (typeof text !== "string") continue;
      // The Envelope is content-addressed: a request, a response and a tool definition alike.
      const parsed = tryParseDigest("RequestDigest", detachedString(text));
      if (!parsed.ok) continue;
      const seen = latest.get(parsed.digest);
      // Undated wins: a Line without a time may be of any age.
      if (seen === undefined) latest.set(parsed.digest, when);
      else if (seen !== UNDATED && (when === UNDATED || when > seen)) latest.set(parsed.digest, when);
    }
  };
  for (const record of records) {
    let verification;
    try {
      verification = await verifyRecord({ path: record }, { onLine });
    } catch (error) {
      if (error instanceof RecordReadError) return { ok: false, refusal: { code: "unreadable_record", path: record, detail: describeIoError(error.cause) } };
      throw error;
    }
    // A record that does not verify may have been cut or edited: its times, and the calls it
    // no longer shows, cannot decide what to delete.
    if (verification.verdict.status !== "verified")
      return { ok: false, refusal: { code: "expiry_refused", path: record, verdict: describeVerdict(verification) } };
  }
  const expire: { digest: RequestDigest; latest: string }[] = [];
  let keptLater = 0;
  let keptUndated = 0;
  for (const [digest, when] of latest) {
    if (when === UNDATED) keptUndated++;
    else if (when >= beforeMs) keptLater++;
    else expire.push({ digest, latest: new Date(when).toISOString() });
  }
  return { ok: true, plan: { expire, keptLater, keptUndated } };
}

/** What expiry did (or, with `--dry-run`, would do) to the entries the plan names. */
export interface ExpiryTally {
  /** Entries turned into tombstones now (or that would be). */
  readonly expired: number;
  /** The bytes their values held. */
  readonly removedBytes: number;
  /** Entries already a tombstone, for whatever reason: nothing to do. */
  readonly alreadyRedacted: number;
  /** Digests the store holds nothing for. */
  readonly notHeld: number;
}

/** One entry expired (or that would be): its digest, when a Line last named it, and its size. */
export interface Expired {
  readonly digest: RequestDigest;
  readonly latest: string;
  readonly size: number;
}

/** How many redactions are under way at once: their tombstones share an fsync (SPEC §14.5). */
const WINDOW = 32;

/**
 * SPEC §14.12: redact each planned entry with the reason `retention`, as `redact` does
 * (§14.8), in plan order. `onExpired` is called for each, in order, once its tombstone is
 * durable and its bytes are overwritten and synced: what it is told is done, a crash
 * notwithstanding.
 */
async function expireEntries(store: EnvelopeStore, plan: ExpiryPlan, onExpired: (e: Expired) => Promise<void>): Promise<ExpiryTally> {
  let expired = 0;
  let removedBytes = 0;
  let alreadyRedacted = 0;
  let notHeld = 0;
  const queue: { readonly entry: ExpiryPlan["expire"][number]; readonly outcome: Promise<RedactOutcome> }[] = [];
  const settle = async (): Promise<void> => {
    const head = queue.shift();
    if (head === undefined) return;
    const outcome = await head.outcome;
    await match(outcome)
      .with({ code: "redacted" }, async (o) => {
        expired++;
        removedBytes += o.removedBytes;
        await onExpired({ ...head.entry, size: o.removedBytes });
      })
      .with({ code: "already_redacted" }, () => void alreadyRedacted++)
      .with({ code: "missing" }, () => void notHeld++)
      // The reason is ours, and fits (SPEC §14.3).
      .with({ code: "reason_refused" }, (o) => Promise.reject(new Error(`the store refused the reason "${RETENTION_REASON}": ${o.detail}`)))
      .exhaustive(unmatched);
  };
  try {
    for (const entry of plan.expire) {
      queue.push({ entry, outcome: store.redact(entry.digest, RETENTION_REASON) });
      if (queue.length >= WINDOW) await settle();
    }
    while (queue.length > 0) await settle();
  } finally {
    // A failure leaves redactions under way: each must settle before the store closes.
    await Promise.allSettled(queue.map((q) => q.outcome));
  }
  return { expired, removedBytes, alreadyRedacted, notHeld };
}

/** `--dry-run`: what {@link expireEntries} would do, read from a store opened read-only. */
async function wouldExpire(source: EnvelopeSource, plan: ExpiryPlan, onExpired: (e: Expired) => Promise<void>): Promise<ExpiryTally> {
  let expired = 0;
  let removedBytes = 0;
  let alreadyRedacted = 0;
  let notHeld = 0;
  for (const entry of plan.expire) {
    const held = await source.entry(entry.digest);
    if (held === undefined) notHeld++;
    else if (held.code === "redacted") alreadyRedacted++;
    else {
      expired++;
      removedBytes += held.size;
      await onExpired({ ...entry, size: held.size });
    }
  }
  return { expired, removedBytes, alreadyRedacted, notHeld };
}

/**
 * Where expiry redacts: a store opened as its one writer, or, for a dry run, a source opened to
 * read. It is opened only once the plan is made, so a record that is refused keeps no writer
 * waiting, and closed before `expire` returns.
 */
export type ExpiryTarget =
  { readonly code: "redact"; readonly open: () => Promise<EnvelopeStore> } | { readonly code: "dry_run"; readonly open: () => Promise<EnvelopeSource> };

/**
 * SPEC §14.12, whole: read the cutoff (`YYYY-MM-DD` or a UTC time with a `Z`), plan under every
 * record (each must verify), then open the target and redact each planned entry with the reason
 * `retention` (or, for a dry run, say what would go). `onExpired` hears of each entry once it
 * is gone. Nothing is expired when the answer is a refusal.
 */
export async function expire(
  records: readonly string[],
  before: string,
  target: ExpiryTarget,
  onExpired: (e: Expired) => Promise<void>,
): Promise<
  | { readonly ok: true; readonly cutoff: string; readonly plan: ExpiryPlan; readonly tally: ExpiryTally }
  | { readonly ok: false; readonly refusal: ExpiryRefusal }
> {
  const cutoff = parseBefore(before);
  if (!cutoff.ok) return { ok: false, refusal: { code: "bad_before", detail: cutoff.detail } };
  const planned = await planExpiry(records, cutoff.ms);
  if (!planned.ok) return planned;
  const plan = planned.plan;
  const tally = await match(target)
    .with({ code: "redact" }, async (t) => {
      const store = await t.open();
      try {
        return await expireEntries(store, plan, onExpired);
      } finally {
        await store.close();
      }
    })
    .with({ code: "dry_run" }, async (t) => {
      const source = await t.open();
      try {
        return await wouldExpire(source, plan, onExpired);
      } finally {
        await source.close();
      }
    })
    .exhaustive(unmatched);
  return { ok: true, cutoff: new Date(cutoff.ms).toISOString(), plan, tally };
}
