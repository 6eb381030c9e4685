/**
 * `@aegis/mcp/internal`: the relay's parts, for aegis's own packages (the vector oracle,
 * `aegis recheck --current-tools` and `aegis export`). No promise of compatibility to anyone
 * else; the public API is `@aegis/mcp`.
 *
 * @packageDocumentation
 */
export { McpRecorder } from "./recorder.js";
export { Gate } from "./gate.js";
export { pinListing } from "./pins.js";
// OpenTelemetry (SPEC Appendix A): the mapping, and the loader of the OpenTelemetry packages,
// which imports them only when called (ADR 0024).
export { RecordExport } from "./otel/record-export.js";
export type { SpanPlan } from "./otel/spans.js";
export { OtlpSetupError, exportSpans, loadOtel } from "./otel/sdk.js";
