/**
 * `@aegis/mcp`: record and enforce every `tools/call` between an MCP client and an MCP server
 * (SPEC §17). {@link runWrap} puts a relay in front of a server started as a child process
 * (`aegis wrap`); {@link recordingTransport} does the same inside a TypeScript agent, around
 * any MCP SDK client transport; {@link requestControl} answers a parked call (`aegis approve`).
 *
 * For: whoever runs an MCP client or server and wants every call recorded, and under a Policy
 * Set enforced, in-process.
 *
 * @packageDocumentation
 */
export { runWrap, WrapError, type WrapFault, type WrapOptions, type WrapResult } from "./wrap.js";
export type { OtlpOptions } from "./otel/options.js";
export { recordingTransport, type RecordingOptions, type RecordingTransport } from "./transport.js";
export type { ParkAnswer, ParkRefusal, ParkState } from "./parks.js";
export type { RelayEnd } from "./relay.js";
export type { Json } from "./message.js";
export { ControlError, ControlRequestError, requestControl, type ControlRequestFault } from "./control.js";
export { type ControlErrorCode, type ControlRequest, type ControlResponse } from "./control-messages.js";
export { type ListedArguments, type ParkSummary } from "./park-summary.js";
export { type Unanswered } from "./outcomes.js";
export { type RefusalStyle } from "./refusal.js";
export { type Notice, type DroppedWhy } from "./notice.js";
export type { Unreadable } from "./strict-frame.js";
