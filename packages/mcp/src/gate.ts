import { lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import { posix } from "node:path";
import { RateWindows, decide, type Bindings, type CallAxes, type Decision, type PolicySet } from "@aegis/policy";
import { type Derived, deriveAxes, matchedRuleId } from "@aegis/policy/internal";
import { canonicalJson } from "./canonical-json.js";
import type { JsonRecord } from "./message.js";
import { Parks, argumentsOf, type Park } from "./parks.js";

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
   * Resolve bound paths on this host, symbolic links followed, as the kernel does (default
   * true): a policy about `/etc` must see `/work/link-to-etc/passwd`. Off, they are resolved
   * lexically (the records of a host that is not the server's).
   */
  readonly followSymlinks?: boolean;
  /** Milliseconds on a clock that does not go backwards, for rate windows. */
  readonly now?: () => number;
  readonly mintApprovalId?: () => string;
}

/** The options of a relay that name what its Gate needs: a gate only when a Policy Set is given. */
export interface Enforcement {
  readonly policy?: PolicySet;
  readonly bindings?: Bindings;
  readonly role?: string;
  readonly session?: string;
  readonly followSymlinks?: boolean;
}

export function gateFor(options: Enforcement): Gate | undefined {
  const { policy, bindings, role, session, followSymlinks } = options;
  if (policy === undefined) return undefined;
  return new Gate({
    policy,
    ...(bindings === undefined ? {} : { bindings }),
    ...(role === undefined ? {} : { role }),
    ...(session === undefined ? {} : { session }),
    ...(followSymlinks === undefined ? {} : { followSymlinks }),
  });
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
  /** The client named roots other than the bindings file's: from then on, a relative path has no known base (SPEC §17.4). */
  private clientRoots = false;

  constructor(readonly options: GateOptions) {}

  /**
   * The roots the client answered a `roots/list` with (each `file://` URI as its path, any
   * other as written, which is how server-filesystem takes it). Any that the bindings file
   * does not declare moves the server's base for relative paths out of wrap's sight, for
   * the rest of the Session.
   */
  clientNamedRoots(roots: readonly string[]): void {
    const declared = new Set(this.options.bindings?.roots ?? []);
    if (roots.some((root) => !declared.has(posix.resolve(root)))) this.clientRoots = true;
  }

  /** Decide one call. Synchronous, so calls are decided, and counted, in frame order. */
  decide(toolId: string, message: JsonRecord, request: Uint8Array): GateVerdict {
    const options = this.options;
    const derived =
      options.bindings === undefined
        ? { axes: {}, paths: [], unresolved: [] }
        : deriveAxes(options.bindings, toolId, message, {
            clientRoots: this.clientRoots,
            ...(options.followSymlinks === false ? {} : { canonicalPath: resolveOnDisk }),
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
    const params = canonicalJson(message["params"] ?? null);
    const approval = this.parks.claim(toolId, derived, params);
    if (approval !== undefined) {
      const resumed = decide(options.policy, { tool_id: toolId, axes: { ...axes, approval_ref: approval.approvalId }, request }, live);
      return { decision: resumed, derived, approval };
    }
    const decision = decide(
      options.policy,
      { tool_id: toolId, axes, request },
      { ...live, ...(options.mintApprovalId === undefined ? {} : { mintApprovalId: options.mintApprovalId }) },
    );
    if (decision.code !== "pending_approval") return { decision, derived };
    const rule = matchedRuleId(decision.matched);
    const args = argumentsOf(message["params"]);
    return { decision, derived, parked: this.parks.park(decision.approval_id, toolId, derived, params, args, rule, new Date()) };
  }
}

/**
 * The file an absolute path names on this host (SPEC §17.4), or undefined when servers could
 * take it for two: symbolic links are followed component by component as the kernel does,
 * and `..` then steps out of where a link led. A server that removes `..` first (Node's
 * `path.resolve`, as server-filesystem does) opens another file when a `..` follows a link,
 * and one that matches names by another Unicode spelling (server-filesystem again) opens an
 * existing file the path does not spell: neither is guessed.
 */
export function resolveOnDisk(path: string): string | undefined {
  const physical = physicalPath(path);
  if (physical === undefined) return undefined;
  return physicalPath(posix.resolve(path)) === physical ? physical : undefined;
}

/** Symbolic links a path may pass through before it is taken to loop (as Linux's ELOOP). */
const MAX_LINKS = 40;

function physicalPath(path: string): string | undefined {
  let pending = path.split("/").filter((part) => part !== "");
  let current = "/";
  let links = 0;
  while (pending.length > 0) {
    const [part, ...rest] = pending;
    pending = rest;
    if (part === undefined || part === ".") continue;
    if (part === "..") {
      current = posix.dirname(current);
      continue;
    }
    const next = posix.join(current, part);
    const info = lstatOrUndefined(next);
    if (info === undefined) {
      // Nothing here exists: no link is left to follow, and what is named is as named. A name
      // another spelling of which exists is one a server may take for that file.
      if (otherSpellingExists(current, part)) return undefined;
      return posix.resolve(current, part, ...rest);
    }
    if (info.isSymbolicLink()) {
      if (++links > MAX_LINKS) return undefined;
      const target = readlinkOrUndefined(next);
      if (target === undefined) return undefined;
      pending = [...target.split("/").filter((p) => p !== ""), ...pending];
      if (target.startsWith("/")) current = "/";
      continue;
    }
    current = next;
  }
  return current;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function readlinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function otherSpellingExists(directory: string, name: string): boolean {
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch {
    return false;
  }
  const nfc = name.normalize("NFC");
  return entries.some((entry) => entry !== name && entry.normalize("NFC") === nfc);
}
