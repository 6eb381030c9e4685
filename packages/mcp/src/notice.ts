import { unmatched } from "@aegis/format/internal";
import { type UnresolvedBinding, describeUnresolved } from "@aegis/policy/internal";
import type { ToolSpecDigest } from "@aegis/format";
import { match } from "ts-pattern";
import { describeUnreadable, type Unreadable } from "./strict-frame.js";

/** Why a server frame was kept from the client (SPEC §17.2). */
export type DroppedWhy =
  /** An answer whose id is that of no request in flight, exactly (`"1"` does not answer `1`). */
  | { readonly code: "unpaired_id"; readonly key: string }
  /** An answer without an id, or with `null`. */
  | { readonly code: "no_id" }
  /** Both a `method` and a `result` or `error`: one client takes it for an answer, another for a request. */
  | { readonly code: "method_and_answer" }
  | { readonly code: "unreadable"; readonly unreadable: Unreadable };

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
  | { readonly code: "unreadable_frame"; readonly from: "client"; readonly bytes: number; readonly why: Unreadable }
  | { readonly code: "batch_refused"; readonly calls: number }
  | { readonly code: "answer_dropped"; readonly bytes: number; readonly why: DroppedWhy }
  | { readonly code: "envelope_refused"; readonly callId: string; readonly detail: string }
  /** One of the relay's four streams failed; the relay takes it as that stream's end. */
  | { readonly code: "stream_failed"; readonly stream: "client_in" | "client_out" | "server_in" | "server_out"; readonly detail: string };

/** The relay's streams: what it reads from the client and the server, what it writes to each. */
export type StreamName = Extract<Notice, { code: "stream_failed" }>["stream"];

const STREAM_WORDS: Readonly<Record<StreamName, string>> = {
  client_in: "reading the client",
  client_out: "writing to the client",
  server_in: "writing to the server",
  server_out: "reading the server",
};

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
    .with(
      { code: "unreadable_frame" },
      (n) =>
        `refused a ${n.bytes}-byte frame from the client, recorded as <unreadable-frame>: ${describeUnreadable(n.why)}; what wrap cannot read does not reach the server`,
    )
    .with(
      { code: "batch_refused" },
      (n) => `refused a JSON-RPC batch holding ${n.calls} tools/call${n.calls === 1 ? "" : "s"}: MCP has no batches, and none of its calls was decided or run`,
    )
    .with(
      { code: "answer_dropped" },
      (n) => `did not relay a ${n.bytes}-byte frame from the server to the client (recorded when it could be a message): ${describeDropped(n.why)}`,
    )
    .with({ code: "record_failed" }, (n) => `the record cannot be written (${n.detail}); no further call may run, and wrap is stopping`)
    .with(
      { code: "envelope_refused" },
      (n) => `the Envelope did not keep the response of ${n.callId} (${n.detail}); its outcome names bytes the Envelope lacks`,
    )
    .with({ code: "stream_failed" }, (n) => `${STREAM_WORDS[n.stream]} failed (${n.detail}); taken as its end`)
    .exhaustive(unmatched);
}

function describeDropped(why: DroppedWhy): string {
  return match(why)
    .with({ code: "unpaired_id" }, (w) => `it answers id ${w.key.length > 64 ? `${w.key.slice(0, 64)}…` : w.key}, which is no request in flight`)
    .with({ code: "no_id" }, () => "it is an answer without an id")
    .with({ code: "method_and_answer" }, () => "it holds both a method and a result or error, which clients read differently")
    .with({ code: "unreadable" }, (w) => describeUnreadable(w.unreadable))
    .exhaustive(unmatched);
}
