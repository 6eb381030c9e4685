import type { CallResult } from "./calls.js";
import type { DecisionAxes, ExecutionOutcome } from "../wire/line-types.js";
import { messageOf } from "../durable/sync.js";
import { describeIoError } from "../durable/io-text.js";
import { RecordWriterError } from "./writer-error.js";
import { RECORDED_REASON } from "./recorded-reasons.js";

// The writer's small steps that hold no state: its clock's spelling, the faults it makes of
// an Envelope's or the disk's refusal. RecordWriter (writer.ts) is the state.

export const systemClock = (): Date => new Date();

/**
 * RFC 3339 in UTC with milliseconds (SPEC §13.7). A clock outside years 0000-9999 (or an
 * invalid Date) has no such spelling: refused before a `seq` is taken.
 */
export function lineTime(date: Date): string {
  const ms = date.getTime();
  if (!(ms >= EARLIEST_TIME && ms <= LATEST_TIME)) throw new RangeError(`the writer's clock gave ${String(date)}, which RFC 3339 cannot spell`);
  return date.toISOString();
}
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: past them `toISOString` writes six-digit years. */
const EARLIEST_TIME = -62_167_219_200_000;
const LATEST_TIME = 253_402_300_799_999;

export function unfinished(execution: ExecutionOutcome): CallResult {
  const axes: DecisionAxes = {};
  const notEvaluated = { status: "denied", reason: RECORDED_REASON.notEvaluated } as const;
  return { policy: notEvaluated, capability: notEvaluated, execution, decision_axes: axes };
}

/** Ask the Envelope; a refusal becomes the writer's `envelope` fault. */
export async function put<D>(part: "request" | "response", action: () => Promise<D> | undefined): Promise<D | undefined> {
  try {
    return await action();
  } catch (error) {
    throw new RecordWriterError({ code: "envelope", part, detail: messageOf(error) }, { cause: error });
  }
}

export function mismatch(part: "request" | "response", kept: string, digest: string): RecordWriterError {
  return new RecordWriterError({ code: "envelope", part, detail: `the Envelope answered ${kept} for bytes that hash to ${digest}` });
}

export async function io<T>(path: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof RecordWriterError) throw error;
    throw new RecordWriterError({ code: "io", path, detail: describeIoError(error) }, { cause: error });
  }
}
