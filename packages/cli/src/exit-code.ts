// The CLI's exit codes: the type, and the verdict's rule, from beside the verdict (ADR 0041).
// Recheck's and the Envelope check's rules come from their packages where used. Browser-safe:
// the report page reaches this module through `@aegis/cli/browser` (ADR 0031).
export { exitCodeOfVerdict, type ExitCode } from "@aegis/format/browser";
