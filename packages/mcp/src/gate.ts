import { realpathSync } from "node:fs";
import { posix } from "node:path";
import {
  RateWindows,
  decide,
  deriveAxes,
  type Bindings,
  type CallAxes,
  type Decision,
  type Derived,
  type PolicySet,
} from "@aegis/policy";
import type { JsonRecord } from "./message.js";
import { Parks, type Park } from "./parks.js";

/**
 * Enforcement (SPEC §17.3): every `tools/call` is put to a Policy Set through `decide`, the
 * same function `aegis recheck` runs, with the axes its bindings derive from the request.
 */
export interface GateOptions {
  readonly policy: PolicySet;
  readonly bindings?: Bindings;
  /** `decision_axes.role`: the role the caller runs as. */
  readonly role?: string;
  /** `decision_axes.session`: the policy's session scope. */
  readonly session?: string;
  /**
   * Follow symbolic links in bound paths, on this host, as a file server does before it
   * opens them. Default true: a policy about `/etc` must see `/work/link-to-etc/passwd`.
   */
  readonly followSymlinks?: boolean;
  /** Milliseconds on a clock that does not go backwards, for rate windows. */
  readonly now?: () => number;
  readonly mintApprovalId?: () => string;
}

export interface GateVerdict {
  readonly decision: Decision;
  readonly derived: Derived;
  /** The approval this call runs under, when a park's approval let it through. */
  readonly approval?: Park;
  /** The park this call made, when it was held for approval. */
  readonly parked?: Park;
}

export class Gate {
  readonly parks = new Parks();
  private readonly windows = new RateWindows();
  private learnedRoots: readonly string[] = [];

  constructor(readonly options: GateOptions) {}

  /** The client's roots (from its answer to `roots/list`): bases for relative paths. */
  learnRoots(roots: readonly string[]): void {
    this.learnedRoots = roots;
  }

  get roots(): readonly string[] {
    return this.learnedRoots;
  }

  /** Decide one call. Synchronous, so calls are decided, and counted, in frame order. */
  decide(toolId: string, message: JsonRecord, request: Uint8Array): GateVerdict {
    const options = this.options;
    const derived = options.bindings === undefined
      ? { axes: {}, paths: [], unresolved: [] }
      : deriveAxes(options.bindings, toolId, message, {
          roots: this.learnedRoots,
          ...(options.followSymlinks === false ? {} : { canonicalPath: followLinks }),
        });
    const axes: CallAxes = {
      ...derived.axes,
      ...(options.role === undefined ? {} : { role: options.role }),
      ...(options.session === undefined ? {} : { session: options.session }),
    };
    const live = { windows: this.windows, ...(options.now === undefined ? {} : { now: options.now }) };
    // An id is minted only for a park that stands: a call an approval lets through takes none.
    const first = decide(options.policy, { tool_id: toolId, axes, request }, { ...live, mintApprovalId: () => "" });
    if (first.code !== "pending_approval") return { decision: first, derived };
    // Deciding again is safe: a park counted no rate window.
    const approval = this.parks.claim(toolId, derived);
    if (approval !== undefined) {
      const resumed = decide(options.policy, { tool_id: toolId, axes: { ...axes, approval_ref: approval.approvalId }, request }, live);
      return { decision: resumed, derived, approval };
    }
    const decision = decide(options.policy, { tool_id: toolId, axes, request }, { ...live, ...(options.mintApprovalId === undefined ? {} : { mintApprovalId: options.mintApprovalId }) });
    if (decision.code !== "pending_approval") return { decision, derived };
    const rule = decision.matched.kind === "rule" ? decision.matched.rule.id : undefined;
    return { decision, derived, parked: this.parks.park(decision.approval_id, toolId, derived, rule, new Date()) };
  }
}

/**
 * The path on the disk: the longest existing prefix with its links followed, and the rest
 * as named. A path the call will create has no link in its missing part to follow.
 */
export function followLinks(path: string): string {
  let head = path;
  const tail: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(head);
      return tail.length === 0 ? real : posix.join(real, ...tail.reverse());
    } catch {
      const parent = posix.dirname(head);
      if (parent === head) return path;
      tail.push(posix.basename(head));
      head = parent;
    }
  }
}
