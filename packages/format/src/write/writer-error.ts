import { match } from "ts-pattern";
import { unmatched } from "../unreachable.js";
import { describeCanonicalFault, type CanonicalFault } from "../wire/canonical.js";
import type { LockHolder, LockResult } from "../durable/lock.js";
import { describeTampered } from "../verify/verdict.js";
import { FaultError } from "../fault-error.js";

/** Why a {@link RecordWriter} refused or stopped. Each has a stable code. */
export type WriterFault =
  | { readonly code: "locked"; readonly path: string; readonly lockPath: string; readonly holder?: LockHolder; readonly stale: boolean }
  | { readonly code: "torn_tail"; readonly path: string; readonly offset: number; readonly detail: string }
  /**
   * The last line parses but has no canonical form: the verifier calls it Tampered
   * (`malformed_line` at `line`, with `detail`), not torn, so it is neither chained onto nor
   * cut off (SPEC §13.2).
   */
  | { readonly code: "tampered_tail"; readonly path: string; readonly offset: number; readonly line: number; readonly detail: string }
  | { readonly code: "tail_too_long"; readonly path: string; readonly offset: number }
  | { readonly code: "insecure_dev_key" }
  | { readonly code: "not_canonical"; readonly fault: CanonicalFault }
  | { readonly code: "line_too_long"; readonly bytes: number; readonly limit: number }
  | { readonly code: "unknown_call"; readonly callId: string }
  | { readonly code: "duplicate_call"; readonly callId: string }
  | { readonly code: "closed" }
  | { readonly code: "envelope"; readonly part: "request" | "response"; readonly detail: string }
  | { readonly code: "failed"; readonly detail: string }
  | { readonly code: "io"; readonly path: string; readonly detail: string };

/**
 * The text of a writer fault, saying what to do where there is something to do (repair a
 * torn tail, provision a key). It is a `RecordWriterError`'s message, and what the CLI
 * prints after `error: `.
 */
export function describeWriterFault(fault: WriterFault): string {
  return match(fault)
    .with({ code: "locked" }, (f) => {
      const who = f.holder === undefined ? "another writer" : `pid ${f.holder.pid} on ${f.holder.host}`;
      const stale = f.stale ? ` (pid ${f.holder?.pid ?? "?"} is not running: the lock looks stale; remove ${f.lockPath} if no writer is running)` : "";
      return `${f.path} is being written by ${who}: ${f.lockPath} exists${stale}`;
    })
    .with(
      { code: "torn_tail" },
      (f) => `${f.path} has a torn final line at byte offset ${f.offset} (${f.detail}); refusing to chain onto it (repair moves the torn bytes aside)`,
    )
    .with(
      { code: "tampered_tail" },
      (f) =>
        `${f.path} ends in a line the verifier calls Tampered, not a torn write (Tampered: ${describeTampered({ code: "malformed_line", line: f.line, detail: f.detail })}); it starts at byte offset ${f.offset} and is evidence: refusing to chain onto it or cut it off`,
    )
    .with({ code: "tail_too_long" }, (f) => `${f.path}: the final line, from byte offset ${f.offset}, is longer than a writer reads; refusing to chain onto it`)
    .with(
      { code: "insecure_dev_key" },
      () =>
        "a record kept on disk needs a provisioned signing key; the insecure dev key may only sign test vectors (generate one with `aegis keygen --out <PATH>`)",
    )
    .with({ code: "not_canonical" }, (f) => `the line is outside the value space: ${describeCanonicalFault(f.fault)}`)
    .with({ code: "line_too_long" }, (f) => `the line is ${f.bytes} bytes, over the ${f.limit}-byte limit`)
    .with({ code: "unknown_call" }, (f) => `no call ${f.callId} is in flight on this writer`)
    .with({ code: "duplicate_call" }, (f) => `call ${f.callId} is already in flight on this writer`)
    .with({ code: "closed" }, () => "the writer is closed")
    .with({ code: "envelope" }, (f) =>
      f.part === "request"
        ? `the Envelope did not keep the request bytes, so the call was not started: ${f.detail}`
        : `the Envelope did not keep the response bytes; the outcome was recorded with their digest: ${f.detail}`,
    )
    .with({ code: "failed" }, (f) => `an earlier write failed, so this writer has stopped: ${f.detail}`)
    .with({ code: "io" }, (f) => `${f.path}: ${f.detail}`)
    .exhaustive(unmatched);
}

/**
 * What {@link RecordWriter} and {@link repairTornTail} throw, or reject with, for a refusal a
 * caller can meet; `fault.code` says which, so a caller can match it without reading the text.
 */
export class RecordWriterError extends FaultError<WriterFault> {
  constructor(fault: WriterFault, options?: ErrorOptions) {
    super("RecordWriterError", fault, describeWriterFault, options);
  }
}

/** The refusal for a file another writer holds. */
export function lockedFault(path: string, lock: Extract<LockResult, { ok: false }>): WriterFault {
  return { code: "locked", path, lockPath: lock.lockPath, ...(lock.holder === undefined ? {} : { holder: lock.holder }), stale: lock.stale };
}
