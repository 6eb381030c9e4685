/**
 * `@aegis/mcp`: record and enforce every `tools/call` between an MCP client and an MCP server
 * (SPEC §17). {@link runWrap} puts a relay in front of a server started as a child process
 * (`aegis wrap`); {@link recordingTransport} does the same inside a TypeScript agent, around
 * any MCP SDK client transport; {@link requestControl} answers a parked call (`aegis approve`).
 *
 * @packageDocumentation
 */
export { runWrap, WrapError, describeWrapFault, type WrapFault, type WrapOptions, type WrapResult } from "./wrap.js";
export type { OtlpOptions } from "./otel/options.js";
export { recordingTransport, type RecordingOptions, type RecordingTransport } from "./transport.js";
export type { ParkAnswer, ParkRefusal, ParkState } from "./parks.js";
export type { RelayEnd } from "./relay.js";
export type { Json } from "./message.js";
export {
  ControlError,
  ControlRequestError,
  describeRefusal,
  requestControl,
  type ControlErrorCode,
  type ControlRequest,
  type ControlRequestFault,
  type ControlResponse,
} from "./control.js";
export { MAX_LISTED_ARGUMENT_BYTES, type ListedArguments, type ParkSummary } from "./park-summary.js";
export { DROPPED_ANSWER_TOOL, PASSTHROUGH_POLICY_SET_HASH, UNKNOWN_TOOL, UNREADABLE_FRAME_TOOL, unansweredReason, type Unanswered } from "./outcomes.js";
export { REFUSAL_CODE, REFUSAL_MESSAGE, REFUSAL_META_KEY, type RefusalCode, type RefusalDetail, type RefusalStyle } from "./refusal.js";
export { describeNotice, type DroppedWhy, type Notice } from "./notice.js";
export type { Unreadable } from "./strict-frame.js";
