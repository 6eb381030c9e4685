import { unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import type { ExitCode } from "../exit-code.js";

/** Why `aegis export` exported nothing, or not everything (SPEC Appendix A.6). */
export type ExportFault =
  /** The record is Tampered: nothing is exported. */
  | { readonly code: "tampered"; readonly verdict: string }
  /** The record is Indeterminate and `--allow-indeterminate` was not given: nothing is exported. */
  | { readonly code: "indeterminate"; readonly verdict: string }
  /** A Line a span needs carries no `time` (SPEC §13.7): nothing is exported. */
  | { readonly code: "untimed"; readonly at: string }
  /** More calls than one export holds while the verdict is not yet known. */
  | { readonly code: "too_many_calls"; readonly limit: number }
  /** The OpenTelemetry packages could not be loaded, or the protocol is not one. */
  | { readonly code: "setup"; readonly detail: string }
  /** The endpoint did not take the spans: `delivered` of `total` went before it failed. */
  | { readonly code: "delivery"; readonly endpoint: string; readonly detail: string; readonly delivered: number; readonly total: number };

/** Exit codes as `aegis verify`'s: 1 Tampered, 3 Indeterminate, 2 what could not be read, sent or written. */
export function exitCodeOfExportFault(fault: ExportFault): ExitCode {
  return match(fault)
    .with({ code: "tampered" }, () => 1 as const)
    .with({ code: "indeterminate" }, () => 3 as const)
    .with({ code: "untimed" }, { code: "too_many_calls" }, { code: "setup" }, { code: "delivery" }, () => 2 as const)
    .exhaustive(unmatched);
}

export function renderExportFault(fault: ExportFault): { readonly error: string; readonly help: string } {
  return match(fault)
    .with({ code: "tampered" }, (f) => ({
      error: `the record is ${f.verdict}: nothing was exported`,
      help: "run `aegis verify` on the record to see where it breaks; spans are only made of a record that holds",
    }))
    .with({ code: "indeterminate" }, (f) => ({
      error: `the record is ${f.verdict}: nothing was exported`,
      help: "pass --allow-indeterminate to export it anyway (each span says how its call ended); `aegis verify` says why it is Indeterminate",
    }))
    .with({ code: "untimed" }, (f) => ({
      error: `${f.at} carries no time, and a span needs one: nothing was exported`,
      help: "only Lines an aegis-ts writer wrote carry `time` (SPEC §13.7); the reference's records cannot be exported as spans",
    }))
    .with({ code: "too_many_calls" }, (f) => ({
      error: `the record holds more than ${f.limit} calls: an export holds every span until the record's verdict is known`,
      help: "export a part of it cut at a Session boundary",
    }))
    .with({ code: "setup" }, (f) => ({
      error: `OpenTelemetry: ${f.detail}`,
      help: "OTEL_EXPORTER_OTLP_PROTOCOL takes http/protobuf (the default) or http/json; the OpenTelemetry packages install with @aegis/cli",
    }))
    .with({ code: "delivery" }, (f) => ({
      error: `${f.endpoint} did not take the spans (${f.detail}); ${f.delivered} of ${f.total} were delivered before`,
      help: "check OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) and _HEADERS, and that the collector is up; exporting again sends the same ids",
    }))
    .exhaustive(unmatched);
}
