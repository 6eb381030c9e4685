import { unmatched, type Verdict } from "@aegis/format/browser";
import { match } from "ts-pattern";

/**
 * Exit codes are API: CI gates script them, and they are the reference's (README, "Exit
 * codes"): 0 success or Verified, 1 Tampered or a usage error, 2 input that could not be
 * read, 3 Indeterminate.
 */
export type ExitCode = 0 | 1 | 2 | 3;

export function exitCodeOfVerdict(verdict: Verdict): ExitCode {
  return match(verdict)
    .with({ status: "verified" }, () => 0 as const)
    .with({ status: "tampered" }, () => 1 as const)
    .with({ status: "indeterminate" }, () => 3 as const)
    .exhaustive(unmatched);
}
