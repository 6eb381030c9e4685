import { unmatched, type ExitCode } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { RECHECK_INDETERMINATE_CODES, type RecheckIndeterminateCode, type RecheckVerdict } from "./recheck-verdict.js";

/** Counts over a recheck's verdicts (SPEC §16.5). */
export interface RecheckSummary {
  /** Recorded outcomes rechecked: the sum of the counts below. */
  readonly outcomes: number;
  /** Calls the set decides now as recorded. */
  readonly unchanged: number;
  /** Calls recorded as allowed or parked that the set now denies. */
  readonly newly_blocked: number;
  /** Calls recorded as denied, rate-limited or parked that the set now allows. */
  readonly newly_allowed: number;
  /** Calls recorded as allowed, denied or rate-limited that the set now parks for approval. */
  readonly newly_parked: number;
  /** Calls that could not be re-evaluated; `reasons` says why. */
  readonly indeterminate: number;
  /** Indeterminate verdicts by reason; every reason is present, possibly 0. */
  readonly reasons: Readonly<Record<RecheckIndeterminateCode, number>>;
}

type Counts = { -readonly [K in Exclude<keyof RecheckSummary, "reasons" | "outcomes">]: number };

/** Counts verdicts as they stream past; memory does not grow with their number. */
export class RecheckTally {
  private readonly counts: Counts = { unchanged: 0, newly_blocked: 0, newly_allowed: 0, newly_parked: 0, indeterminate: 0 };
  private readonly reasons = Object.fromEntries(RECHECK_INDETERMINATE_CODES.map((c) => [c, 0])) as Record<RecheckIndeterminateCode, number>;

  /** Count one verdict, under its code and, when it is indeterminate, its reason. */
  add(verdict: RecheckVerdict): void {
    match(verdict)
      .with({ code: "unchanged" }, () => this.counts.unchanged++)
      .with({ code: "newly_blocked" }, () => this.counts.newly_blocked++)
      .with({ code: "newly_allowed" }, () => this.counts.newly_allowed++)
      .with({ code: "newly_parked" }, () => this.counts.newly_parked++)
      .with({ code: "indeterminate" }, (v) => {
        this.counts.indeterminate++;
        this.reasons[v.reason.code]++;
      })
      .exhaustive(unmatched);
  }

  /**
   * What the verdicts so far establish, as a whole (SPEC §16.5): nothing rechecked, else
   * indeterminate (which outranks changed), else changed, else all unchanged.
   */
  get conclusion(): RecheckConclusion {
    return recheckConclusion(this.summary);
  }

  /** The counts so far, as a new object that verdicts added later do not change. */
  get summary(): RecheckSummary {
    const c = this.counts;
    return {
      outcomes: c.unchanged + c.newly_blocked + c.newly_allowed + c.newly_parked + c.indeterminate,
      ...c,
      reasons: { ...this.reasons },
    };
  }
}

/** Drain a recheck, counting. */
export async function summarizeRecheck(verdicts: AsyncIterable<RecheckVerdict>): Promise<RecheckSummary> {
  const tally = new RecheckTally();
  for await (const verdict of verdicts) tally.add(verdict);
  return tally.summary;
}

/**
 * What a recheck established, as a whole (SPEC §16.5). `nothing_rechecked` (no outcome in
 * the file) is its own answer: a recheck that re-evaluated nothing has shown nothing, and
 * must not read as a pass.
 */
export type RecheckConclusion =
  { readonly code: "nothing_rechecked" } | { readonly code: "all_unchanged" } | { readonly code: "changed" } | { readonly code: "indeterminate" };

/**
 * Conclude a recheck from its counts (SPEC §16.5): nothing rechecked, else indeterminate
 * (which outranks changed), else changed, else all unchanged.
 */
export function recheckConclusion(summary: RecheckSummary): RecheckConclusion {
  if (summary.outcomes === 0) return { code: "nothing_rechecked" };
  // Indeterminate outranks changed: a run that could not answer for every call has not
  // shown that its list of changes is the whole of them.
  if (summary.indeterminate > 0) return { code: "indeterminate" };
  if (summary.newly_blocked + summary.newly_allowed + summary.newly_parked > 0) return { code: "changed" };
  return { code: "all_unchanged" };
}

/**
 * `aegis recheck`'s exit code (SPEC §16.5): 0 every call unchanged, 1 some call changed, 3 any
 * indeterminate (which outranks a change). A file with nothing to recheck is 1: the reference
 * exits 0 there, but a recheck that re-evaluated nothing has shown nothing (issue 5).
 */
export function exitCodeOfRecheck(conclusion: RecheckConclusion): ExitCode {
  return match(conclusion)
    .with({ code: "nothing_rechecked" }, () => 1 as const)
    .with({ code: "all_unchanged" }, () => 0 as const)
    .with({ code: "changed" }, () => 1 as const)
    .with({ code: "indeterminate" }, () => 3 as const)
    .exhaustive(unmatched);
}

/** True when the recheck re-evaluated no outcome at all. */
export function nothingRechecked(summary: RecheckSummary): boolean {
  return summary.outcomes === 0;
}
