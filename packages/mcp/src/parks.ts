import type { Appended, ApprovedScope, RecordWriter, DecisionPayload, NetGrant } from "@aegis/format";
import type { Derived } from "@aegis/policy/internal";
import { canonicalJson } from "./canonical-json.js";
import { isRecord, type Json } from "./message.js";

/**
 * Calls parked for approval (SPEC §17.5). A park refuses the call and remembers what it
 * asked for; a human's answer is recorded as a signed `decision` whose approved scope is
 * exactly that; one later call within the scope then runs under the approval, once.
 */

/**
 * Where a parked call stands (SPEC §17.5): waiting for an answer, being answered, approved
 * (`used` once a retry has run under the approval), or denied.
 */
export type ParkState =
  | { readonly code: "pending" }
  /** An answer is being recorded: a second answer is refused meanwhile. */
  | { readonly code: "deciding" }
  | { readonly code: "approved"; readonly used: boolean }
  | { readonly code: "denied"; readonly reason: string };

export interface Park {
  readonly approvalId: string;
  readonly toolId: string;
  readonly rule: string | undefined;
  readonly scope: ApprovedScope;
  /**
   * The call's `params` (tool name and arguments) in canonical form: an approval lets
   * through a retry of this call, and nothing else (SPEC §17.5).
   */
  readonly request: string | undefined;
  /** The call's `params.arguments`, as the approver is shown them (SPEC §17.5). */
  readonly arguments: ParkedArguments;
  readonly parkedAt: Date;
  state: ParkState;
}

/**
 * A parked call's `params.arguments` (SPEC §17.5): `none`, the call carried none; `json`,
 * their canonical form (§17.6), whole; `no_canonical_form`, a string in them holds a lone
 * surrogate or they nest too deep to write (no retry can then run under an approval).
 */
export type ParkedArguments = { readonly code: "none" } | { readonly code: "json"; readonly json: string } | { readonly code: "no_canonical_form" };

/** The arguments of a call whose `params` is `params`, as a park keeps them. */
export function argumentsOf(params: Json | undefined): ParkedArguments {
  if (!isRecord(params) || !Object.hasOwn(params, "arguments")) return { code: "none" };
  const json = canonicalJson(params["arguments"] ?? null);
  return json === undefined ? { code: "no_canonical_form" } : { code: "json", json };
}

/**
 * A human's answer to a parked call (SPEC §17.5), recorded as a signed `decision`: approve
 * it, so that one retry within its scope runs, or deny it, saying why.
 */
export type ParkAnswer = { readonly code: "approve" } | { readonly code: "deny"; readonly reason: string };

/** Why an answer was refused. */
export type ParkRefusal =
  | { readonly code: "unknown_approval"; readonly approvalId: string }
  | { readonly code: "already_decided"; readonly approvalId: string; readonly state: ParkState };

export class Parks {
  private readonly parks = new Map<string, Park>();

  park(approvalId: string, toolId: string, derived: Derived, request: string | undefined, args: ParkedArguments, rule: string | undefined, now: Date): Park {
    const park: Park = { approvalId, toolId, rule, scope: scopeOf(toolId, derived), request, arguments: args, parkedAt: now, state: { code: "pending" } };
    this.parks.set(approvalId, park);
    return park;
  }

  get(approvalId: string): Park | undefined {
    return this.parks.get(approvalId);
  }

  /**
   * Take an answer: the `decision` to record, or why it cannot be given. The park is then
   * `deciding` until {@link Parks.settle} (the Line is durable) or {@link Parks.unsettle} (it was not
   * written), so that two answers racing each other cannot both be recorded.
   */
  decide(
    approvalId: string,
    answer: ParkAnswer,
  ): { readonly ok: true; readonly park: Park; readonly decision: DecisionPayload } | { readonly ok: false; readonly refusal: ParkRefusal } {
    const park = this.parks.get(approvalId);
    if (park === undefined) return { ok: false, refusal: { code: "unknown_approval", approvalId } };
    if (park.state.code !== "pending") return { ok: false, refusal: { code: "already_decided", approvalId, state: park.state } };
    park.state = { code: "deciding" };
    const verdict = answer.code === "approve" ? { verdict: "approved" as const, scope: park.scope } : { verdict: "denied" as const, reason: answer.reason };
    return { ok: true, park, decision: { approval_id: approvalId, verdict } };
  }

  /** The answer's `decision` Line is durable: from now on it counts. */
  settle(park: Park, answer: ParkAnswer): void {
    if (park.state.code !== "deciding") return;
    park.state = answer.code === "approve" ? { code: "approved", used: false } : { code: "denied", reason: answer.reason };
  }

  /** The answer could not be recorded: the park waits for one again. */
  unsettle(park: Park): void {
    if (park.state.code === "deciding") park.state = { code: "pending" };
  }

  /**
   * Take the first unused approval for a retry of this very call (its tool and arguments,
   * whose paths, when bound, lie within the scope recorded), and use it up: an approval lets
   * one call through, the one a human was shown.
   */
  claim(toolId: string, derived: Derived, request: string | undefined): Park | undefined {
    // Arguments with no canonical form are never a retry of anything.
    if (request === undefined) return undefined;
    for (const park of this.parks.values()) {
      if (park.state.code === "approved" && !park.state.used && park.request === request && covers(park.scope, toolId, derived)) {
        park.state = { code: "approved", used: true };
        return park;
      }
    }
    return undefined;
  }

  pending(): Park[] {
    return [...this.parks.values()].filter((p) => p.state.code === "pending");
  }
}

/**
 * Record a human's answer to a park as a signed `decision` (SPEC §17.5). Resolves once it is
 * durable; only then can a call run under it. One function for every relay a wrap runs: a
 * park made on one connection may be answered while another is open.
 */
export async function recordParkAnswer(
  parks: Parks | undefined,
  writer: RecordWriter,
  approvalId: string,
  answer: ParkAnswer,
): Promise<{ readonly ok: true; readonly appended: Appended } | { readonly ok: false; readonly refusal: ParkRefusal }> {
  if (parks === undefined) return { ok: false, refusal: { code: "unknown_approval", approvalId } };
  const decided = parks.decide(approvalId, answer);
  if (!decided.ok) return decided;
  let appended: Appended;
  try {
    appended = await writer.decision(decided.decision);
  } catch (error) {
    parks.unsettle(decided.park);
    throw error;
  }
  parks.settle(decided.park, answer);
  return { ok: true, appended };
}

/** The authority approving this call grants: its tool, its paths by access, its endpoint. */
function scopeOf(toolId: string, derived: Derived): ApprovedScope {
  const read = derived.paths.filter((p) => p.access === "read").map((p) => p.resolved);
  const write = derived.paths.filter((p) => p.access === "write").map((p) => p.resolved);
  const endpoint = derived.axes.net;
  // wrap sees no HTTP method; "*" says the scope does not narrow them.
  const net: NetGrant | undefined = endpoint === undefined ? undefined : { http: [{ host: endpoint.host, ports: [endpoint.port], methods: ["*"] }] };
  return {
    tool_id: toolId,
    ...(read.length + write.length > 0 ? { fs: { read_paths: read, write_paths: write } } : {}),
    ...(net === undefined ? {} : { net }),
  };
}

/** Does a scope cover this call? Paths are covered by an equal path or a directory above them. */
function covers(scope: ApprovedScope, toolId: string, derived: Derived): boolean {
  if (scope.tool_id !== toolId) return false;
  if (scope.fs !== undefined) {
    if (derived.paths.length === 0) return false;
    const fs = scope.fs;
    const ok = derived.paths.every((p) => (p.access === "write" ? fs.write_paths : [...fs.read_paths, ...fs.write_paths]).some((s) => within(p.resolved, s)));
    if (!ok) return false;
  }
  if (scope.net !== undefined) {
    const endpoint = derived.axes.net;
    if (endpoint === undefined) return false;
    if (!scope.net.http.some((h) => h.host === endpoint.host && h.ports.includes(endpoint.port))) return false;
  }
  return true;
}

function within(path: string, scopePath: string): boolean {
  if (path === scopePath) return true;
  const prefix = scopePath.endsWith("/") ? scopePath : `${scopePath}/`;
  return path.startsWith(prefix);
}
