import { classifyClient, elementsOf, namesRevision, type Json } from "./message.js";
import { refusalFrame, type Refusal, type RefusalStyle } from "./refusal.js";

/** What to do with a client frame once every intent it carries is durable. */
export type FrameVerdict =
  | { readonly code: "forward" }
  /** Not forwarded: send `frame` to the client in its place. */
  | { readonly code: "answer"; readonly frame: Buffer }
  /** Not forwarded, and nothing can be sent back (a refused notification). */
  | { readonly code: "drop" }
  /** The record could not be written: not forwarded, answered when it can be, and stop. */
  | { readonly code: "failed"; readonly frame: Buffer | undefined; readonly error: Error };

/** The answer to a frame whose calls cannot be recorded: each call is told, nothing runs. */
export function failedVerdict(parsed: Json | undefined, error: Error, style: RefusalStyle): FrameVerdict {
  if (parsed === undefined) return { code: "failed", frame: undefined, error };
  const refusals: Refusal[] = [];
  for (const element of elementsOf(parsed).map(classifyClient)) {
    if (element.code === "call" || element.code === "malformed_call") {
      const reason = "the record cannot be written, so no call may run";
      refusals.push({ id: element.id, code: "RECORD_FAILED", detail: { reason }, call: true, revision: namesRevision(element.message) });
    }
  }
  return { code: "failed", frame: refusals.length === 0 ? undefined : refusalFrame(refusals, Array.isArray(parsed), style), error };
}
