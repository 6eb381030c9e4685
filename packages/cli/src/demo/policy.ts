import { PolicySetHash, canonicalize, type DecisionAxes, type PolicyOutcome } from "@aegis/format";

/**
 * The demo's embedded policy: a stand-in with the shape of a Policy Set (rules in order,
 * first match wins, a default), enough to allow, deny and park. Its identity is the
 * SHA-256 of the canonical form of its projection, numbers as strings (SPEC §6).
 */
export interface DemoRule {
  readonly id: string;
  readonly tool: string;
  readonly action: "allow" | "deny" | "pending_approval";
  readonly path_prefix?: string;
  readonly reason?: string;
}

export const DEMO_POLICY = {
  version: "1",
  default: "deny",
  rules: [
    { id: "read-workspace", tool: "fs.read", action: "allow", path_prefix: "/workspace/" },
    { id: "deny-net-post", tool: "net.post", action: "deny", reason: "outbound POST is not allowed from this agent" },
    { id: "park-shell", tool: "shell.exec", action: "pending_approval" },
  ] satisfies DemoRule[],
} as const;

export const DEMO_POLICY_HASH = PolicySetHash.of(canonicalize(DEMO_POLICY));

export interface DemoRequest {
  readonly tool: string;
  readonly path?: string;
  readonly approvalRef?: string;
}

export interface DemoDecision {
  readonly policy: PolicyOutcome;
  readonly axes: DecisionAxes;
}

/** First matching rule wins; a call resumed under an approval is allowed by it. */
export function decide(request: DemoRequest, approvalId: string): DemoDecision {
  const capability = request.tool;
  const fs = request.path === undefined ? {} : { fs: { path_raw: request.path, path_canonical: request.path } };
  if (request.approvalRef !== undefined) {
    return { policy: { status: "allowed" }, axes: { capability, role: "agent", session: "demo", approval_ref: request.approvalRef, ...fs } };
  }
  for (const rule of DEMO_POLICY.rules as readonly DemoRule[]) {
    if (rule.tool !== request.tool) continue;
    if (rule.path_prefix !== undefined && !(request.path ?? "").startsWith(rule.path_prefix)) continue;
    const axes: DecisionAxes = { capability, role: "agent", session: "demo", matched_rule: rule.id, ...fs };
    switch (rule.action) {
      case "allow":
        return { policy: { status: "allowed" }, axes };
      case "deny":
        return { policy: { status: "denied", reason: rule.reason ?? `denied by ${rule.id}` }, axes };
      case "pending_approval":
        return { policy: { status: "pending_approval", approval_id: approvalId }, axes };
    }
  }
  return { policy: { status: "denied", reason: "no rule matched; the default is deny" }, axes: { capability, role: "agent", session: "demo", ...fs } };
}
