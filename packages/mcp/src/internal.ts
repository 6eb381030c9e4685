/**
 * `@aegis/mcp/internal`: the relay's parts, for aegis's own packages (the CLI's `aegis vectors`
 * and `aegis recheck --current-tools`). No promise of compatibility to anyone else; the public
 * API is `@aegis/mcp`.
 *
 * @packageDocumentation
 */
export { McpRecorder, type RecorderOptions } from "./recorder.js";
export { type FrameVerdict } from "./frame-verdict.js";
export { Relay, type RelayEnds, type RelayOptions } from "./relay.js";
export { Gate, gateFor, resolveOnDisk, type Enforcement, type GateOptions, type GateVerdict } from "./gate.js";
export { Parks, argumentsOf, covers, scopeOf, type Park, type ParkedArguments } from "./parks.js";
export { MAX_SOCKET_PATH_BYTES, listenControl, type ControlHandler, type ControlServer } from "./control.js";
export { DEFAULT_MAX_FRAME_BYTES, FrameSplitter, isBlankFrame, type FrameEvent } from "./frames.js";
export { type Governance } from "./outcomes.js";
export { refusalFrame, refusalText, type Refusal } from "./refusal.js";
export { ToolSpecs, pinListing, pinTool, type ListingChange, type PinnedTool, type ToolSpecSink } from "./pins.js";
export { canonicalJson } from "./canonical-json.js";
export { type JsonRecord } from "./message.js";
export { MAX_FRAME_DEPTH, describeUnreadable, readFrame, type FrameReading, type Unreadable } from "./strict-frame.js";
export { transition, type LifeEvent, type Phase } from "./lifecycle.js";
// OpenTelemetry (SPEC Appendix A): the mapping, and the loader of the OpenTelemetry packages,
// which imports them only when called (ADR 0024).
export { RecordFollower, type CallRecord, type FollowedLine, type FollowerSink, type LinePoint, type SessionRecord, type SessionRef } from "./otel/follow.js";
export { SpanPlanner, type AttributeValue, type CallFacts, type SpanPlan, type Untimed } from "./otel/spans.js";
export { requestFacts, responseFacts, type RequestFacts, type ResponseFacts } from "./otel/facts.js";
export { callSpanId, parseTraceparent, sessionSpanId, sessionTraceId, type SpanRef } from "./otel/ids.js";
export { OtlpSetupError, exportSpans, loadOtel, type OtelKit, type OtlpProtocol } from "./otel/sdk.js";
// Public types the parts above take, so the CLI can import from one place.
export type { Json, ParkAnswer, ParkRefusal, ParkState, RelayEnd } from "./index.js";
