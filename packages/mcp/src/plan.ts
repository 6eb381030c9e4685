import type { DecisionAxes, PolicyOutcome } from "@aegis/format";
import { unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import type { Gate, GateVerdict } from "./gate.js";
import type { ClientElement } from "./message.js";
import type { Notice } from "./notice.js";
import { UNKNOWN_TOOL, type Governance } from "./outcomes.js";
import type { RefusalCode } from "./refusal.js";

/** One element's fate, decided before anything is written. */
export type Planned =
  | { readonly code: "allow"; readonly element: CallElement; readonly governance: Governance }
  | {
      readonly code: "refuse";
      readonly element: CallElement;
      readonly refusal: RefusalCode;
      readonly policy: PolicyOutcome;
      readonly axes: DecisionAxes;
      readonly verdict: GateVerdict | undefined;
    }
  /** A request reusing an id in flight, whose answer could not be told from the other's. */
  | { readonly code: "duplicate"; readonly element: Extract<ClientElement, { code: "call" | "malformed_call" | "request" | "list_tools" }> }
  | { readonly code: "malformed"; readonly element: Extract<ClientElement, { code: "malformed_call" }> };

type CallElement = Extract<ClientElement, { code: "call" | "call_notification" }>;

/** What planning a frame asks of the recorder. */
export interface PlanContext {
  /** Whether a client request with this id key is in flight. */
  readonly inFlight: (key: string) => boolean;
  /** Whether a call with this id key is in flight. */
  readonly isCall: (key: string) => boolean;
  readonly gate?: Gate;
  readonly notify: (notice: Notice) => void;
}

/**
 * Decide every element of a client frame, before anything is written (SPEC §17.2, §17.3).
 * A request whose id is in flight is refused when either of the two is a call: an answer
 * with that id could not be told to be the call's.
 */
export function planFrame(elements: readonly ClientElement[], frame: Buffer, context: PlanContext): Planned[] {
  const plans: Planned[] = [];
  const frameKeys = new Set<string>();
  const frameCalls = new Set<string>();
  for (const element of elements) {
    if (element.code === "call" || element.code === "malformed_call") {
      const key = element.key;
      const taken = context.inFlight(key) || frameKeys.has(key);
      frameKeys.add(key);
      frameCalls.add(key);
      if (taken) plans.push({ code: "duplicate", element });
      else if (element.code === "malformed_call") plans.push({ code: "malformed", element });
      else plans.push(decide(element, frame, context));
    } else if (element.code === "request" || element.code === "list_tools") {
      if (context.isCall(element.key) || frameCalls.has(element.key)) plans.push({ code: "duplicate", element });
      frameKeys.add(element.key);
    } else if (element.code === "call_notification") {
      plans.push(decide(element, frame, context));
    }
  }
  return plans;
}

function decide(element: CallElement, frame: Buffer, context: PlanContext): Planned {
  const gate = context.gate;
  const toolId = element.name ?? UNKNOWN_TOOL;
  if (gate === undefined) return { code: "allow", element, governance: { code: "passthrough" } };
  const verdict = gate.decide(toolId, element.message, frame);
  if (verdict.derived.unresolved.length > 0) context.notify({ code: "unbound", toolId, unresolved: verdict.derived.unresolved });
  const d = verdict.decision;
  const governance: Governance = { code: "policy", policy: d.policy, policySetHash: d.policy_set_hash, axes: d.decision_axes };
  const refusal = match(d)
    .with({ code: "allowed" }, () => undefined)
    .with({ code: "denied" }, (x) => (x.cause.code === "unbound" ? ("POLICY_UNEVALUABLE" as const) : ("POLICY_DENIED" as const)))
    .with({ code: "rate_limited" }, () => "RATE_LIMITED" as const)
    .with({ code: "pending_approval" }, () => "PENDING_APPROVAL" as const)
    .exhaustive(unmatched);
  if (refusal === undefined) return { code: "allow", element, governance };
  return { code: "refuse", element, refusal, policy: d.policy, axes: d.decision_axes, verdict };
}
