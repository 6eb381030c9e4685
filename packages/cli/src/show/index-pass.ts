import type { ApprovalVerdict, Position, WalkedLine } from "@aegis/format";

/**
 * What `show` learns in its first pass (the verification walk) to link Lines that are far
 * apart: which call parked each approval, and which decision answered it. Memory grows
 * with the number of parks, not with the file.
 */
export interface ApprovalLinks {
  readonly parkedBy: Map<string, { readonly call_id: string; readonly at: Position }>;
  readonly decidedAt: Map<string, { readonly at: Position; readonly verdict: ApprovalVerdict }>;
}

export function approvalIndex(): { readonly links: ApprovalLinks; readonly onLine: (line: WalkedLine) => void } {
  const links: ApprovalLinks = { parkedBy: new Map(), decidedAt: new Map() };
  const onLine = (line: WalkedLine): void => {
    const v = line.value;
    if ("known" in line.lineType && line.lineType.known === "outcome") {
      const policy = v["policy"];
      const callId = v["call_id"];
      if (typeof policy === "object" && policy !== null && !Array.isArray(policy) && typeof callId === "string") {
        const approval = (policy as Record<string, unknown>)["approval_id"];
        if (typeof approval === "string" && !links.parkedBy.has(approval)) links.parkedBy.set(approval, { call_id: callId, at: line.at });
      }
    }
    if ("known" in line.lineType && line.lineType.known === "decision") {
      const approval = v["approval_id"];
      const verdict = v["verdict"];
      if (typeof approval === "string" && typeof verdict === "object" && verdict !== null) {
        links.decidedAt.set(approval, { at: line.at, verdict: verdict as unknown as ApprovalVerdict });
      }
    }
  };
  return { links, onLine };
}
