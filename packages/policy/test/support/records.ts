import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordWriter, RequestDigest, type OutcomePayload, type EnvelopeLookup, type EnvelopeRead } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { decide, type CallAxes, type Decision, type PolicySet } from "../../src/index.js";
import { type LiveState } from "../../src/decide.js";

const DEV = insecureDevKey();

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "aegis-policy-"));
}

export interface TestCall {
  readonly call_id: string;
  readonly tool_id: string;
  readonly axes?: CallAxes;
  /** The verbatim request; a small JSON document naming the call when not given. */
  readonly request?: Uint8Array;
}

export function requestOf(call: TestCall): Uint8Array {
  return call.request ?? new TextEncoder().encode(JSON.stringify({ call: call.call_id, tool: call.tool_id }));
}

/** The outcome a runtime would write for `call` under `decision`. */
function outcomeOf(call: TestCall, decision: Decision): OutcomePayload {
  return {
    call_id: call.call_id,
    tool_id: call.tool_id,
    request_digest: RequestDigest.of(requestOf(call)),
    policy_set_hash: decision.policy_set_hash,
    policy: decision.policy,
    capability: { status: "denied", reason: "not evaluated" },
    execution: decision.code === "allowed" ? { status: "success" } : { status: "host_denied", reason: "refused by policy" },
    decision_axes: decision.decision_axes,
  };
}

/**
 * One Session written by the real writer: for each call an intent, then `decide` under
 * `set`, then the outcome recording exactly what `decide` returned. Returns the decisions.
 */
export async function writeSession(path: string, set: PolicySet, calls: readonly TestCall[], live?: LiveState): Promise<Decision[]> {
  const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
  const decisions: Decision[] = [];
  try {
    for (const call of calls) {
      const request = requestOf(call);
      await writer.intent({ call_id: call.call_id, tool_id: call.tool_id, request_digest: RequestDigest.of(request), policy_set_hash: set.hash });
      const decision = decide(set, { tool_id: call.tool_id, ...(call.axes === undefined ? {} : { axes: call.axes }), request }, live);
      decisions.push(decision);
      await writer.outcome(outcomeOf(call, decision));
    }
  } finally {
    await writer.close();
  }
  return decisions;
}

/** An in-memory Envelope that answers what it is told to, per digest. */
export function fakeEnvelope(entries: ReadonlyMap<string, EnvelopeRead>): EnvelopeLookup & { readonly asked: string[] } {
  const asked: string[] = [];
  const lookup = async (digest: RequestDigest): Promise<EnvelopeRead> => {
    asked.push(digest);
    return entries.get(digest) ?? { code: "missing" };
  };
  return Object.assign(lookup, { asked });
}
