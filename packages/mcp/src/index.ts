/**
 * @aegis/mcp: record and enforce every `tools/call` between an MCP client and an MCP server
 * (SPEC §17). `runWrap` puts a relay in front of a server started as a child process
 * (`aegis wrap`); `recordingTransport` does the same inside a TypeScript agent, around any
 * MCP SDK client transport.
 */
export { runWrap, WrapError, describeWrapFault, type WrapFault, type WrapOptions, type WrapResult } from "./wrap.js";
export { McpRecorder, type RecorderOptions } from "./recorder.js";
export { type FrameVerdict } from "./frame-verdict.js";
export { Relay, type RelayEnd, type RelayEnds, type RelayOptions } from "./relay.js";
export { Gate, gateFor, resolveOnDisk, type Enforcement, type GateOptions, type GateVerdict } from "./gate.js";
export { Parks, covers, scopeOf, type Park, type ParkAnswer, type ParkRefusal, type ParkState } from "./parks.js";
export {
  ControlError,
  ControlRequestError,
  MAX_SOCKET_PATH_BYTES,
  describeRefusal,
  listenControl,
  requestControl,
  type ControlErrorCode,
  type ControlHandler,
  type ControlRequest,
  type ControlRequestFault,
  type ControlResponse,
  type ControlServer,
  type ParkSummary,
} from "./control.js";
export { DEFAULT_MAX_FRAME_BYTES, FrameSplitter, isBlankFrame, type FrameEvent } from "./frames.js";
export { PASSTHROUGH_POLICY_SET_HASH, UNKNOWN_TOOL, unansweredReason, type Governance, type Unanswered } from "./outcomes.js";
export { REFUSAL_CODE, REFUSAL_MESSAGE, refusalFrame, type Refusal, type RefusalCode, type RefusalDetail } from "./refusal.js";
export { ToolSpecs, pinListing, pinTool, type ListingChange, type PinnedTool, type ToolSpecSink } from "./pins.js";
export { canonicalJson } from "./canonical-json.js";
export { describeNotice, type Notice } from "./notice.js";
export { parseFrame, type Json, type JsonRecord } from "./message.js";
export { RecordingTransport, recordingTransport, type RecordingOptions } from "./transport.js";
