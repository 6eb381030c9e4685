import { match } from "ts-pattern";
import { unmatched } from "../unreachable.js";
import type { Verdict } from "./verdict.js";

/**
 * Exit codes are API: CI gates script them, they are the reference's (README, "Exit codes"),
 * and the vectors state them (SPEC §11.4's `exit_code`). Each rule lives beside the answer it
 * maps: this one beside the verdict; recheck's beside its conclusion (`@aegis/policy`), the
 * Envelope check's beside its tally (`@aegis/envelope`). What only a command decides (a
 * fault's code, the worst of several files) stays with the command. Browser-safe: the report
 * page reaches it through this package's browser entry (ADR 0031).
 *
 * 0 success or Verified, 1 Tampered or a usage error, 2 input that could not be read,
 * 3 Indeterminate.
 */
export type ExitCode = 0 | 1 | 2 | 3;

/** `aegis verify` (SPEC §8.6): 0 Verified, 1 Tampered, 3 Indeterminate. */
export function exitCodeOfVerdict(verdict: Verdict): ExitCode {
  return (
    match(verdict)
      .with({ status: "verified" }, () => 0 as const)
      .with({ status: "tampered" }, () => 1 as const)
      // Stryker disable next-line ObjectLiteral: equivalent E22
      .with({ status: "indeterminate" }, () => 3 as const)
      .exhaustive(unmatched)
  );
}
