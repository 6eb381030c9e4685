import { unmatched } from "@aegis/format/internal";
import { FaultError, type RecordWriterError } from "@aegis/format";
import type { EnvelopeError } from "@aegis/envelope";
import { match } from "ts-pattern";
import type { ControlError } from "./control.js";

/** Why wrap could not start. Nothing was relayed; no server is left running. */
export type WrapFault =
  | { readonly code: "writer"; readonly error: RecordWriterError }
  | { readonly code: "envelope"; readonly error: EnvelopeError }
  | { readonly code: "control"; readonly error: ControlError }
  | { readonly code: "spawn"; readonly command: string; readonly detail: string }
  /** Neither a command nor a URL, or both; `listen` off loopback without a token. */
  | { readonly code: "options"; readonly detail: string }
  /** The address to serve Streamable HTTP on could not be listened on. */
  | { readonly code: "listen"; readonly detail: string }
  /** `listen` without a token, and the token file beside the record could not be made or read, or is not private. */
  | { readonly code: "listen_token"; readonly path: string; readonly detail: string }
  /** `checkpoints` was asked for and the record does not verify as far as it goes: it is not checkpointed. */
  | { readonly code: "checkpoints"; readonly detail: string }
  /** `confine` was asked for and the mechanism is missing or cannot enforce every grant (SPEC §17.11). */
  | { readonly code: "confine"; readonly detail: string }
  /** `otlp` was asked for and the OpenTelemetry export could not be set up: its packages are missing, or the protocol is not one. */
  | { readonly code: "otlp"; readonly detail: string };

/** What {@link runWrap} throws when it could not start (SPEC §17.7): match on its `fault`. */
export class WrapError extends FaultError<WrapFault> {
  constructor(
    /** What could not be opened or started, as a value to match on by its `code`. */
    fault: WrapFault,
  ) {
    super("WrapError", fault, describeWrapFault);
  }
}

/** One line saying why wrap could not start, for a person: `aegis wrap` prints it after `error:`. */
function describeWrapFault(fault: WrapFault): string {
  return match(fault)
    .with({ code: "writer" }, (f) => f.error.message)
    .with({ code: "envelope" }, (f) => f.error.message)
    .with({ code: "control" }, (f) => `control socket ${f.error.path}: ${f.error.message}`)
    .with({ code: "spawn" }, (f) => `could not start ${f.command}: ${f.detail}`)
    .with({ code: "options" }, { code: "listen" }, (f) => f.detail)
    .with({ code: "listen_token" }, (f) => `${f.path}: ${f.detail}`)
    .with({ code: "checkpoints" }, { code: "confine" }, (f) => f.detail)
    .with({ code: "otlp" }, (f) => `--otlp: ${f.detail}`)
    .exhaustive(unmatched);
}
