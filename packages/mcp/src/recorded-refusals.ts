import type { Appended, CallResult, PolicyOutcome, PolicySetHash } from "@aegis/format";
import { unmatched } from "@aegis/format/internal";
import { matchedRuleId } from "@aegis/policy/internal";
import { match } from "ts-pattern";
import { namesRevision, type ClientElement } from "./message.js";
import type { Notice } from "./notice.js";
import {
  MALFORMED,
  PASSTHROUGH_POLICY_SET_HASH,
  UNKNOWN_TOOL,
  UNREADABLE_FRAME_TOOL,
  inBatch,
  malformed,
  policySetHashOf,
  refused,
  siblingRefused,
  unreadableFrame,
} from "./outcomes.js";
import { describeUnreadable, type Unreadable } from "./strict-frame.js";
import type { FrameVerdict } from "./frame-verdict.js";
import type { Planned } from "./plan.js";
import { refusalFrame, type Refusal, type RefusalCode, type RefusalStyle } from "./refusal.js";

// A client frame that stops at wrap (SPEC §17.3): every call it carried recorded as not run,
// and the client answered. McpRecorder (recorder.ts) decides that a frame stops; this says how.

/** What recording a refusal needs of the recorder. */
export interface RefusalContext {
  /** Record a call that did not run: intent and outcome together. */
  unrun(toolId: string, hash: PolicySetHash, frame: Buffer, result: CallResult, specOf?: string, continues?: string): Promise<Appended>;
  notify(notice: Notice): void;
  /** The round a refused call would have continued (SPEC §17.2). */
  continuation(element: ClientElement): string | undefined;
  readonly style: RefusalStyle;
  /** The control socket's path, named in a park's notice. */
  readonly control: string | undefined;
}

/** A batch holding a call: every call in it recorded as not run, every request in it answered. */
export async function refuseBatch(ctx: RefusalContext, elements: readonly ClientElement[], frame: Buffer): Promise<FrameVerdict> {
  const writes: Promise<unknown>[] = [];
  const refusals: Refusal[] = [];
  const reason = "a JSON-RPC batch holding a tools/call is refused whole: MCP has no batches since 2025-06-18";
  for (const element of elements) {
    if (isCallElement(element)) {
      const name = element.code === "malformed_call" ? UNKNOWN_TOOL : (element.name ?? UNKNOWN_TOOL);
      writes.push(ctx.unrun(name, PASSTHROUGH_POLICY_SET_HASH, frame, inBatch(), name));
    }
    if (element.code === "call" || element.code === "malformed_call" || element.code === "request" || element.code === "list_tools") {
      refusals.push({ id: element.id, code: "HOST_DENIED", detail: { reason }, call: false });
    }
  }
  ctx.notify({ code: "batch_refused", calls: writes.length });
  await Promise.all(writes);
  return refusals.length === 0 ? { code: "drop" } : { code: "answer", frame: refusalFrame(refusals, true, ctx.style) };
}

/** The frame stops here: record every call it carried as not run, and answer the client. */
export async function refuseFrame(ctx: RefusalContext, plans: readonly Planned[], frame: Buffer, batch: boolean): Promise<FrameVerdict> {
  const writes: Promise<unknown>[] = [];
  const refusals: Refusal[] = [];
  for (const plan of plans) {
    const element = plan.element;
    const toolId = element.code === "call" || element.code === "call_notification" ? (element.name ?? UNKNOWN_TOOL) : UNKNOWN_TOOL;
    const answer = (code: RefusalCode, detail: Refusal["detail"] = {}): void => {
      if (element.code === "call" || element.code === "malformed_call") {
        refusals.push({ id: element.id, code, detail, call: true, revision: namesRevision(element.message) });
      }
    };
    match(plan)
      .with({ code: "malformed" }, () => {
        writes.push(ctx.unrun(UNKNOWN_TOOL, PASSTHROUGH_POLICY_SET_HASH, frame, malformed("no_name")));
        answer("HOST_DENIED", { reason: MALFORMED });
      })
      .with({ code: "duplicate" }, (p) => {
        const reason = "a request with this id is still in flight; MCP forbids reusing a request id";
        // A call is recorded as refused; another request reusing a call's id runs nothing.
        if (p.element.code === "call" || p.element.code === "malformed_call") {
          writes.push(ctx.unrun(toolId, PASSTHROUGH_POLICY_SET_HASH, frame, malformed("duplicate_id"), toolId));
          answer("DUPLICATE_REQUEST_ID", { reason });
        } else refusals.push({ id: p.element.id, code: "DUPLICATE_REQUEST_ID", detail: { reason }, call: false });
      })
      .with({ code: "allow" }, (p) => {
        const governance = p.governance;
        const policy: PolicyOutcome = governance.code === "policy" ? governance.policy : { status: "allowed" };
        const axes = governance.code === "policy" ? governance.axes : {};
        writes.push(ctx.unrun(toolId, policySetHashOf(governance), frame, siblingRefused(policy, axes), toolId, ctx.continuation(p.element)));
        answer("HOST_DENIED", { reason: "another call in this batch was refused, so the batch did not reach the server" });
      })
      .with({ code: "refuse" }, (p) => {
        const hash = p.verdict?.decision.policy_set_hash ?? PASSTHROUGH_POLICY_SET_HASH;
        writes.push(ctx.unrun(toolId, hash, frame, refused(p.policy, p.axes), toolId, ctx.continuation(p.element)));
        const decision = p.verdict?.decision;
        const rule = decision === undefined ? undefined : matchedRuleId(decision.matched);
        answer(p.refusal, {
          ...(rule === undefined ? {} : { rule }),
          ...(decision === undefined ? {} : { reason: decision.reason }),
          ...(p.policy.status === "pending_approval" ? { approval_id: p.policy.approval_id } : {}),
        });
        const parked = p.verdict?.parked;
        if (parked !== undefined) ctx.notify({ code: "parked", approvalId: parked.approvalId, toolId, rule: parked.rule, control: ctx.control });
      })
      .exhaustive(unmatched);
  }
  await Promise.all(writes);
  if (refusals.length === 0) return { code: "drop" };
  return { code: "answer", frame: refusalFrame(refusals, batch, ctx.style) };
}

export function isCallElement(element: ClientElement): element is Extract<ClientElement, { code: "call" | "call_notification" | "malformed_call" }> {
  return element.code === "call" || element.code === "call_notification" || element.code === "malformed_call";
}

/** A client frame that is not a message: refused with `id` null (it was not read), and recorded by its digest. */
export function refuseUnreadable(ctx: RefusalContext, frame: Buffer, why: Unreadable): Promise<FrameVerdict> {
  ctx.notify({ code: "unreadable_frame", from: "client", bytes: frame.length, why });
  const answer = refusalFrame(
    [{ id: null, code: "UNREADABLE_FRAME", detail: { reason: `wrap could not read the frame: ${describeUnreadable(why)}` }, call: false }],
    false,
    ctx.style,
  );
  const written = ctx.unrun(UNREADABLE_FRAME_TOOL, PASSTHROUGH_POLICY_SET_HASH, frame, unreadableFrame(why.code));
  return written.then((): FrameVerdict => ({ code: "answer", frame: answer }));
}

/** Whether forgiving readers could take bytes that are not strictly JSON for a message: an object or array, as `JSON.parse` reads it. */
export function looksLikeMessage(frame: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(frame.toString("utf8"));
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}
