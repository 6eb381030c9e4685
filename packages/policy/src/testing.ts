/**
 * @aegis/policy/testing: assertions for an integrator's own test suite (vitest, jest,
 * node:test or anything else). Each throws an `Error` (a `RecheckAssertionError`) whose message lists the calls
 * at fault, one report line each (SPEC §16.4), and returns the summary when it passes.
 */
import type { PolicySet } from "./model.js";
import { recheck, recheckBytes, type RecheckOptions, type RecheckTarget } from "./recheck.js";
import { describeRecheckLine, type ChangeCode, type RecheckVerdict } from "./recheck-verdict.js";
import { RecheckTally, type RecheckSummary } from "./summary.js";
import { FaultError } from "@aegis/format";

/** A record file: its path, or its bytes. */
export type RecordSource = string | Uint8Array;

/** A set to recheck every call under, or a `RecheckTarget` (from `@aegis/policy`). */
export type RecheckUnder = PolicySet | RecheckTarget;

/** Thrown by the assertions below; `verdicts` holds the calls at fault. */
export class RecheckAssertionError extends FaultError<{ readonly detail: string }> {
  constructor(
    message: string,
    /** The counts over the whole record. */
    readonly summary: RecheckSummary,
    /** The verdicts of the calls at fault that the record holds; empty when it holds no outcome. */
    readonly verdicts: readonly RecheckVerdict[],
  ) {
    super("RecheckAssertionError", { detail: message }, (f) => f.detail);
  }
}

/**
 * Assert that `policy` decides every recorded call as the record says: fails when any call
 * differs, when any is indeterminate, and when the record holds no outcome at all.
 *
 * @throws RecheckAssertionError when it fails; the file system's error when the record cannot be read.
 * @example
 * ```ts
 * await assertRecheckUnchanged("run.aarl", parsePolicySet(readFileSync("policy.yaml", "utf8")));
 * ```
 */
export async function assertRecheckUnchanged(record: RecordSource, policy: RecheckUnder, options?: RecheckOptions): Promise<RecheckSummary> {
  const { summary, verdicts } = await run(record, policy, options);
  const faults = verdicts.filter((v) => v.code !== "unchanged");
  if (summary.outcomes === 0) throw new RecheckAssertionError("recheck: the record holds no outcome, so nothing was rechecked", summary, []);
  if (faults.length > 0) {
    throw new RecheckAssertionError(
      `recheck: ${faults.length} of ${summary.outcomes} recorded call(s) are not unchanged:\n${faults.map((v) => `  ${describeRecheckLine(v)}`).join("\n")}`,
      summary,
      faults,
    );
  }
  return summary;
}

/**
 * Assert exactly which calls `policy` would change, by `call_id`: every call named must
 * change (as the given kind, when a kind is given), and no other call may. Fails too when
 * any call is indeterminate (the list of changes would not be known to be whole) and when
 * the record holds no outcome.
 *
 * @throws RecheckAssertionError when it fails; the file system's error when the record cannot be read.
 * @example
 * ```ts
 * await assertRecheckChanges("run.aarl", stricter, { "call-7": "newly_blocked" });
 * await assertRecheckChanges("run.aarl", stricter, ["call-7", "call-9"]);
 * ```
 */
export async function assertRecheckChanges(
  record: RecordSource,
  policy: RecheckUnder,
  expected: readonly string[] | Readonly<Record<string, ChangeCode>>,
  options?: RecheckOptions,
): Promise<RecheckSummary> {
  const wanted: ReadonlyMap<string, ChangeCode | undefined> = Array.isArray(expected)
    ? new Map((expected as readonly string[]).map((id) => [id, undefined]))
    : new Map(Object.entries(expected as Readonly<Record<string, ChangeCode>>));
  const { summary, verdicts } = await run(record, policy, options, (v) => v.call_id !== undefined && wanted.has(v.call_id));
  if (summary.outcomes === 0) throw new RecheckAssertionError("recheck: the record holds no outcome, so nothing was rechecked", summary, []);

  const problems: string[] = [];
  const faults: RecheckVerdict[] = [];
  const changedIds = new Set<string>();
  for (const v of verdicts) {
    if (v.code === "unchanged") continue;
    if (v.code === "indeterminate") {
      problems.push(`  indeterminate, so the changes are not known to be all: ${describeRecheckLine(v)}`);
      faults.push(v);
      continue;
    }
    const id = v.call_id;
    if (id !== undefined) changedIds.add(id);
    const want = id === undefined ? undefined : wanted.get(id);
    if (id === undefined || !wanted.has(id)) {
      problems.push(`  changed, and not expected to: ${describeRecheckLine(v)}`);
      faults.push(v);
    } else if (want !== undefined && want !== v.code) {
      problems.push(`  expected ${want}: ${describeRecheckLine(v)}`);
      faults.push(v);
    }
  }
  for (const id of wanted.keys()) {
    if (!changedIds.has(id)) {
      const seen = verdicts.find((v) => v.call_id === id);
      problems.push(seen === undefined ? `  call ${id}: expected to change, and not in the record` : `  expected to change: ${describeRecheckLine(seen)}`);
      if (seen !== undefined) faults.push(seen);
    }
  }
  if (problems.length > 0) {
    throw new RecheckAssertionError(`recheck: the changed calls are not the expected ones:\n${problems.join("\n")}`, summary, faults);
  }
  return summary;
}

/**
 * Recheck, keeping only the verdicts a message may name: those that are not unchanged, and
 * those `alsoKeep` asks for. A record of a million unchanged calls holds no memory here.
 */
async function run(
  record: RecordSource,
  under: RecheckUnder,
  options: RecheckOptions = {},
  alsoKeep: (v: RecheckVerdict) => boolean = () => false,
): Promise<{ summary: RecheckSummary; verdicts: RecheckVerdict[] }> {
  const target: RecheckTarget = "code" in under ? under : { code: "policy", policy: under };
  const stream = typeof record === "string" ? recheck(record, target, options) : recheckBytes(record, target, options);
  const tally = new RecheckTally();
  const verdicts: RecheckVerdict[] = [];
  for await (const v of stream) {
    tally.add(v);
    if (v.code !== "unchanged" || alsoKeep(v)) verdicts.push(v);
  }
  return { summary: tally.summary, verdicts };
}
