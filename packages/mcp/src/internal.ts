/**
 * `@aegis/mcp/internal`: the relay's parts, for aegis's own packages (the CLI's `aegis vectors`
 * and `aegis recheck --current-tools`). No promise of compatibility to anyone else; the public
 * API is `@aegis/mcp`.
 *
 * @packageDocumentation
 */
export { McpRecorder } from "./recorder.js";
export { Gate } from "./gate.js";
export { pinListing } from "./pins.js";
// OpenTelemetry (SPEC Appendix A): the mapping, and the loader of the OpenTelemetry packages,
// which imports them only when called (ADR 0024).
export { RecordFollower, type CallRecord, type SessionRecord } from "./otel/follow.js";
export { SpanPlanner, type SpanPlan } from "./otel/spans.js";
export { callFacts } from "./otel/facts.js";
export { OtlpSetupError, exportSpans, loadOtel, type OtelKit } from "./otel/sdk.js";
