import { RecordReadError, type Verification, type VerifyOptions, verifyRecord } from "@aegis/format";
import { describePosition, describeIoError } from "@aegis/format/internal";
import type { EnvelopeSource } from "@aegis/envelope";
import { RecordExport, type SpanPlan } from "@aegis/mcp/internal";
import { CliError } from "../fault.js";
import { STDIN, type RecordInput } from "../record-input.js";

/**
 * The most calls one export holds: every span waits until the record's verdict is known, so
 * that a Tampered record exports nothing (SPEC §18).
 */
const MAX_EXPORTED_CALLS = 250_000;

/** A record read for its spans: the verdict, and what was followed on the way, in file order. */
export interface ReadForSpans {
  readonly verification: Verification;
  readonly followed: RecordExport;
}

/**
 * Verify the record and, in the same walk, follow its Lines (SPEC Appendix A.6). Nothing is
 * made of them yet: the caller looks at the verdict first.
 */
export async function readForSpans(input: RecordInput, keys: readonly string[], options: Pick<VerifyOptions, "onProgress">): Promise<ReadForSpans> {
  const followed = new RecordExport(MAX_EXPORTED_CALLS);
  const walk: VerifyOptions = {
    ...(keys.length > 0 ? { trust: keys } : {}),
    ...options,
    onLine: (line) => followed.line({ value: line.value, lineHash: line.lineHash, sessionIndex: line.at.session_index }),
  };
  let verification: Verification;
  try {
    verification =
      input.path === STDIN ? await verifyRecord({ lines: process.stdin, name: input.shown }, walk) : await verifyRecord({ path: input.path }, walk);
  } catch (error) {
    if (error instanceof RecordReadError) throw new CliError({ code: "unreadable_record", path: input.shown, detail: describeIoError(error.cause) });
    throw error;
  }
  followed.end();
  if (followed.over && verification.verdict.status !== "tampered")
    throw new CliError({ code: "export", fault: { code: "too_many_calls", limit: MAX_EXPORTED_CALLS } });
  return { verification, followed };
}

/**
 * The spans of what was read, in file order: each call's request and response read from
 * the Envelope, when one is given, for what the span takes from them (SPEC Appendix A.3).
 */
export async function planSpans(read: ReadForSpans, envelope: EnvelopeSource | undefined, content: boolean): Promise<readonly SpanPlan[]> {
  const planned = await read.followed.plan(envelope, content);
  if (planned.ok) return planned.plans;
  const at = describePosition({ session_index: planned.untimed.sessionIndex ?? 0, seq: planned.untimed.seq });
  throw new CliError({ code: "export", fault: { code: "untimed", at: `the Line at ${at}` } });
}
