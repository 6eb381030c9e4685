import { describeCanonicalFault, type CanonicalFault } from "./canonical.js";
import type { LockHolder, LockResult } from "./lock.js";

/** Why a {@link ChainWriter} refused or stopped. Each has a stable code. */
export type WriterFault =
  | { readonly code: "locked"; readonly path: string; readonly lockPath: string; readonly holder?: LockHolder; readonly stale: boolean }
  | { readonly code: "torn_tail"; readonly path: string; readonly offset: number; readonly detail: string }
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

export function describeWriterFault(fault: WriterFault): string {
  switch (fault.code) {
    case "locked": {
      const who = fault.holder === undefined ? "another writer" : `pid ${fault.holder.pid} on ${fault.holder.host}`;
      const stale = fault.stale
        ? ` (pid ${fault.holder?.pid ?? "?"} is not running: the lock looks stale; remove ${fault.lockPath} if no writer is running)`
        : "";
      return `${fault.path} is being written by ${who}: ${fault.lockPath} exists${stale}`;
    }
    case "torn_tail":
      return `${fault.path} has a torn final line at byte offset ${fault.offset} (${fault.detail}); refusing to chain onto it (repair moves the torn bytes aside)`;
    case "tail_too_long":
      return `${fault.path}: the final line, from byte offset ${fault.offset}, is longer than a writer reads; refusing to chain onto it`;
    case "insecure_dev_key":
      return "a record kept on disk needs a provisioned signing key; the insecure dev key may only sign test vectors (generate one with `aegis keygen --out <PATH>`)";
    case "not_canonical":
      return `the line is outside the value space: ${describeCanonicalFault(fault.fault)}`;
    case "line_too_long":
      return `the line is ${fault.bytes} bytes, over the ${fault.limit}-byte limit`;
    case "unknown_call":
      return `no call ${fault.callId} is in flight on this writer`;
    case "duplicate_call":
      return `call ${fault.callId} is already in flight on this writer`;
    case "closed":
      return "the writer is closed";
    case "envelope":
      return fault.part === "request"
        ? `the Envelope did not keep the request bytes, so the call was not started: ${fault.detail}`
        : `the Envelope did not keep the response bytes; the outcome was recorded with their digest: ${fault.detail}`;
    case "failed":
      return `an earlier write failed, so this writer has stopped: ${fault.detail}`;
    case "io":
      return `${fault.path}: ${fault.detail}`;
  }
}

export class ChainWriterError extends Error {
  override readonly name = "ChainWriterError";
  constructor(
    readonly fault: WriterFault,
    options?: { cause?: unknown },
  ) {
    super(describeWriterFault(fault), options);
  }
}

/** The refusal for a file another writer holds. */
export function lockedFault(path: string, lock: Extract<LockResult, { ok: false }>): WriterFault {
  return { code: "locked", path, lockPath: lock.lockPath, ...(lock.holder === undefined ? {} : { holder: lock.holder }), stale: lock.stale };
}
