/**
 * `@aegis/mcp/internal`: the relay's parts, for aegis's own packages (the CLI's `aegis vectors`
 * and `aegis recheck --current-tools`). No promise of compatibility to anyone else; the public
 * API is `@aegis/mcp`.
 *
 * @packageDocumentation
 */
export { McpRecorder } from "./recorder.js";
export { Relay } from "./relay.js";
export { Gate, type Enforcement } from "./gate.js";
export { Parks, covers } from "./parks.js";
export { refusalFrame } from "./refusal.js";
export { pinListing } from "./pins.js";
export { readFrame, type Unreadable } from "./strict-frame.js";
export { transition, type Phase } from "./lifecycle.js";
// OpenTelemetry (SPEC Appendix A): the mapping, and the loader of the OpenTelemetry packages,
// which imports them only when called (ADR 0024).
export { RecordFollower, type CallRecord, type SessionRecord } from "./otel/follow.js";
export { SpanPlanner, type CallFacts, type SpanPlan } from "./otel/spans.js";
export { requestFacts, responseFacts } from "./otel/facts.js";
export { OtlpSetupError, exportSpans, loadOtel, type OtelKit } from "./otel/sdk.js";
// Public types the parts above take, so the CLI can import from one place.
export type { Json } from "./index.js";
