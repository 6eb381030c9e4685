// The rules that give an answer its exit code live beside the vectors, which state them, so
// that the oracle and every command share one copy (ADR 0032); commands import them from here.
export { exitCodeOfEnvelopeCheck, exitCodeOfRecheck, exitCodeOfVerdict, type ExitCode } from "@aegis/vectors/exit-code";
