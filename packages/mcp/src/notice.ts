import { unreachable } from "@aegis/format/internal";
import { describeUnresolved, type UnresolvedBinding } from "@aegis/policy";
import type { ToolSpecDigest } from "@aegis/format";
import { match } from "ts-pattern";

/**
 * What the relay tells its operator as it goes (on wrap's stderr, as `aegis wrap: ...`).
 * None of it is the record: the record is the file; these say what to do about it.
 */
export type Notice =
  | { readonly code: "parked"; readonly approvalId: string; readonly toolId: string; readonly rule: string | undefined; readonly control: string | undefined }
  | { readonly code: "approval_used"; readonly approvalId: string; readonly toolId: string; readonly callId: string }
  | { readonly code: "tool_changed"; readonly name: string; readonly from: ToolSpecDigest; readonly to: ToolSpecDigest }
  | { readonly code: "unpinnable_tools"; readonly count: number }
  | { readonly code: "unbound"; readonly toolId: string; readonly unresolved: readonly UnresolvedBinding[] }
  | { readonly code: "oversize_frame"; readonly from: "client" | "server"; readonly bytes: number; readonly limit: number }
  | { readonly code: "record_failed"; readonly detail: string }
  | { readonly code: "unreadable_frame"; readonly bytes: number; readonly why: "inner_cr" | "not_json" }
  | { readonly code: "envelope_refused"; readonly callId: string; readonly detail: string };

/**
 * One line telling the operator what happened and, where there is something to do, what:
 * `aegis wrap` prints it on stderr after `aegis wrap: `.
 */
export function describeNotice(notice: Notice): string {
  return match(notice)
    .with({ code: "parked" }, (n) => {
      const how = `aegis approve ${n.approvalId}${n.control === undefined ? "" : ` --control ${n.control}`}`;
      return `call to ${n.toolId} parked for approval ${n.approvalId}${n.rule === undefined ? "" : ` (rule ${n.rule})`}; to let it run once, ${how}, then retry it`;
    })
    .with({ code: "approval_used" }, (n) => `${n.callId} (${n.toolId}) runs under approval ${n.approvalId}`)
    .with({ code: "tool_changed" }, (n) => `the server changed its definition of tool ${n.name} (was ${n.from}, now ${n.to}); later outcomes name the new one`)
    .with(
      { code: "unpinnable_tools" },
      (n) => `${n.count} entr${n.count === 1 ? "y" : "ies"} of a tools/list answer could not be pinned (no string name, or no canonical form)`,
    )
    .with({ code: "unbound" }, (n) => `binding for ${n.toolId} gave no axis: ${n.unresolved.map(describeUnresolved).join("; ")}`)
    .with({ code: "oversize_frame" }, (n) =>
      n.from === "client"
        ? `dropped a ${n.bytes}-byte frame from the client (over the ${n.limit}-byte bound); it did not reach the server, and the client was told`
        : `dropped a ${n.bytes}-byte frame from the server (over the ${n.limit}-byte bound); the call it answered stays unanswered`,
    )
    .with({ code: "unreadable_frame" }, (n) =>
      n.why === "inner_cr"
        ? `refused a ${n.bytes}-byte frame from the client: it holds a carriage return before its end, which a server could read as several messages`
        : `refused a ${n.bytes}-byte frame from the client that is not JSON: under a Policy Set, what wrap cannot read does not reach the server`,
    )
    .with({ code: "record_failed" }, (n) => `the record cannot be written (${n.detail}); no further call may run, and wrap is stopping`)
    .with(
      { code: "envelope_refused" },
      (n) => `the Envelope did not keep the response of ${n.callId} (${n.detail}); its outcome names bytes the Envelope lacks`,
    )
    .exhaustive(unreachable);
}
