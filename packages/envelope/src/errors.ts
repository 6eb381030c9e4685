import { stat } from "node:fs/promises";
import { describeIoError, errnoOf, unmatched } from "@aegis/format/internal";
import { type LockHolder, FaultError } from "@aegis/format";
import { match } from "ts-pattern";

/** Why an Envelope operation failed (SPEC §14). Each code is stable; match on it. */
export type EnvelopeFault =
  | { readonly code: "locked"; readonly lockPath: string; readonly holder?: LockHolder; readonly stale: boolean }
  | { readonly code: "not_an_envelope"; readonly path: string; readonly detail: string }
  | { readonly code: "unsupported_version"; readonly path: string; readonly version: number }
  | { readonly code: "damaged_descriptor"; readonly path: string; readonly detail: string }
  | { readonly code: "io"; readonly path: string; readonly detail: string }
  /** A write or fsync failed: the store refuses everything after it (SPEC §14.5). */
  | { readonly code: "failed"; readonly detail: string }
  | { readonly code: "closed" }
  | { readonly code: "too_large"; readonly bytes: number; readonly limit: number }
  | { readonly code: "not_bytes"; readonly detail: string }
  | { readonly code: "bad_digest"; readonly text: string; readonly detail: string }
  | { readonly code: "exists"; readonly path: string };

/**
 * What the Envelope throws for a failure a user can cause or meet: a store another writer
 * holds, a path that is no Envelope, a full disk. Match on `fault`
 * rather than on the message; the message words the fault as every aegis command does.
 */
export class EnvelopeError extends FaultError<EnvelopeFault> {
  constructor(fault: EnvelopeFault, options?: ErrorOptions) {
    super("EnvelopeError", fault, describeEnvelopeFault, options);
  }
}

/**
 * One line saying what failed and where, for a person: `aegis` prints it after `error:`.
 * For a lock whose holder has gone, it also says what to do.
 */
export function describeEnvelopeFault(fault: EnvelopeFault): string {
  return match(fault)
    .with({ code: "locked" }, (f) => {
      const who = f.holder === undefined ? "another writer" : `process ${f.holder.pid} on ${f.holder.host}`;
      return f.stale
        ? `${f.lockPath} is held by ${who}, which is no longer running; remove the lock file if no writer uses the store`
        : `the Envelope is locked by ${who} (${f.lockPath}): one writer per store`;
    })
    .with({ code: "not_an_envelope" }, (f) => `${f.path} is not an Envelope: ${f.detail}`)
    .with({ code: "unsupported_version" }, (f) => `${f.path}: layout version ${f.version} is not supported (this reader knows version 1)`)
    .with({ code: "damaged_descriptor" }, (f) => `${f.path}: damaged store descriptor: ${f.detail}`)
    .with({ code: "io" }, (f) => `${f.path}: ${f.detail}`)
    .with({ code: "failed" }, (f) => `the Envelope stopped after a failed write: ${f.detail}`)
    .with({ code: "closed" }, () => "the Envelope is closed")
    .with({ code: "too_large" }, (f) => `${f.bytes} bytes is more than an entry may hold (${f.limit})`)
    .with({ code: "not_bytes" }, (f) => f.detail)
    .with({ code: "bad_digest" }, (f) => `not a digest: ${JSON.stringify(f.text.slice(0, 80))}: ${f.detail}`)
    .with({ code: "exists" }, (f) => `${f.path} already exists`)
    .exhaustive(unmatched);
}

/** Run a file-system action; its error becomes `io` naming `path`. */
export async function io<T>(path: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw ioError(path, error);
  }
}

export function ioError(path: string, error: unknown): Error {
  if (error instanceof EnvelopeError) return error;
  return new EnvelopeError({ code: "io", path, detail: describeIoError(error) }, { cause: error });
}

/** Whether something is at `path`; an error other than its absence becomes `io`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw ioError(path, error);
  }
}
