import { type ApprovalVerdict, type Position, type WalkedLine } from "@aegis/format";
import { readTypedLine } from "@aegis/format/internal";

/**
 * What `show` learns in its first pass (the verification walk) to link Lines that are far
 * apart: which call parked each approval, and which decision answered it. Memory grows
 * with the number of parks, not with the file. Only Lines that read as their type are
 * indexed: a signed Line can still hold a shape this version does not define.
 */
export interface ApprovalLinks {
  readonly parkedBy: Map<string, { readonly call_id: string; readonly at: Position }>;
  readonly decidedAt: Map<string, { readonly at: Position; readonly verdict: ApprovalVerdict }>;
}

export function approvalIndex(): { readonly links: ApprovalLinks; readonly onLine: (line: WalkedLine) => void } {
  const links: ApprovalLinks = { parkedBy: new Map(), decidedAt: new Map() };
  const onLine = (line: WalkedLine): void => {
    if (line.lineType.token !== "outcome" && line.lineType.token !== "decision") return;
    const typed = readTypedLine(line.value);
    if (!typed.ok) return;
    const t = typed.value;
    if (t.line_type === "outcome" && t.line.policy.status === "pending_approval" && !links.parkedBy.has(t.line.policy.approval_id)) {
      links.parkedBy.set(t.line.policy.approval_id, { call_id: t.line.call_id, at: line.at });
    }
    if (t.line_type === "decision") links.decidedAt.set(t.line.approval_id, { at: line.at, verdict: t.line.verdict });
  };
  return { links, onLine };
}
