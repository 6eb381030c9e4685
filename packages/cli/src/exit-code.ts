// The rules that give an answer its exit code live beside the vectors, which state them, so
// that the oracle and every command share one copy (ADR 0032); commands import them from here.
// Browser-safe: the report page reaches this module through `@aegis/cli/browser` (ADR 0031).
export { exitCodeOfEnvelopeCheck, exitCodeOfRecheck, exitCodeOfVerdict, type ExitCode } from "@aegis/vectors/exit-code";
