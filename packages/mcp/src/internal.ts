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
// Public types the parts above take, so the CLI can import from one place.
export type { Json, ParkAnswer, ParkRefusal, ParkState, RelayEnd } from "./index.js";
