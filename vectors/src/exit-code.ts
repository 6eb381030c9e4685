import { unmatched, type Verdict } from "@aegis/format/browser";
import { match } from "ts-pattern";
import type { RecheckConclusion } from "@aegis/policy/internal";

/**
 * Exit codes are API: CI gates script them, they are the reference's (README, "Exit codes"),
 * and the vectors state them (SPEC §11.4's `exit_code`). These are the rules that give an
 * answer its code, in one place: `aegis` returns them and the vector oracle writes and checks
 * them, so the two cannot disagree. What only a command decides (a fault's code, the worst of
 * several files) stays with the command. It names no Node API, and imports only the format's
 * browser entry: the report page reaches it through `@aegis/cli/browser` (ADR 0031).
 *
 * 0 success or Verified, 1 Tampered or a usage error, 2 input that could not be read,
 * 3 Indeterminate.
 */
export type ExitCode = 0 | 1 | 2 | 3;

/** `aegis verify` (SPEC §8.6): 0 Verified, 1 Tampered, 3 Indeterminate. */
export function exitCodeOfVerdict(verdict: Verdict): ExitCode {
  return match(verdict)
    .with({ status: "verified" }, () => 0 as const)
    .with({ status: "tampered" }, () => 1 as const)
    .with({ status: "indeterminate" }, () => 3 as const)
    .exhaustive(unmatched);
}

/**
 * `aegis recheck` (SPEC §16.5): 0 every call unchanged, 1 some call changed, 3 any
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

/**
 * `aegis envelope verify` (SPEC §14): 1 when the Envelope holds bytes that do not hash to the
 * digest naming them, else 2 when damage lost entries, else 0.
 */
export function exitCodeOfEnvelopeCheck(found: { readonly mismatched: number; readonly lost: number }): ExitCode {
  return found.mismatched > 0 ? 1 : found.lost > 0 ? 2 : 0;
}
