import type { RecordWriterOptions } from "@aegis/format";
import { isIP } from "node:net";
import { WrapError } from "../wrap-error.js";
import { bubblewrapFails, findBubblewrap, outerArgs, sandboxArgs, type Bubblewrap } from "./bubblewrap.js";
import { grantsOf, type ConfineRequest, type Grants, type NetGrant } from "./grants.js";
import { NetGate } from "./net-gate.js";
import { netHelperSource, type NetHelperConfig } from "./net-helper.js";

/** The record's `confinement` member (SPEC §17.11), as the writer is given it. */
type Confinement = NonNullable<RecordWriterOptions["confinement"]>;

/**
 * `aegis wrap --confine` (SPEC §17.11): the grants checked, the mechanism found and tried,
 * and what starts a server held in it. Fail closed: when the mechanism is missing, or cannot
 * enforce every grant, wrap does not start, unless `--best-effort`, which starts the server
 * with what can be enforced and says what is not, on stderr and on the record.
 */
export interface Confined {
  /** What the Session's `open` carries (SPEC §17.11). */
  readonly member: Confinement;
  /** How to start a server held in the sandbox: undefined when nothing could be enforced (`mechanism: none`). */
  readonly launch: ((command: string, args: readonly string[]) => Launch) | undefined;
  /** Let go of what the confinement holds open (the network gate). */
  close(): Promise<void>;
}

/** The program that starts the server in its sandbox; its status comes on fd 3. */
export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
}

/** Check the grants, find and try bubblewrap, and say how the server will be held. */
export async function prepareConfinement(
  request: ConfineRequest,
  env: NodeJS.ProcessEnv | undefined,
  cwd: string,
  say: (text: string) => void,
): Promise<Confined> {
  const grants = await grantsOf(request, cwd);
  const bwrap = await findBubblewrap(env);
  const missing =
    bwrap === undefined
      ? "bubblewrap (bwrap) is not on PATH"
      : await bubblewrapFails(bwrap, false).then((why) => why && `bubblewrap cannot confine here: ${why}`);
  if (bwrap === undefined || missing !== undefined) {
    const why = missing ?? "bubblewrap cannot confine here";
    if (!request.bestEffort) throw new WrapError({ code: "confine", detail: `${why}: the server would not be confined` });
    say(`--best-effort: ${why}; the server runs NOT confined, and the record says so (mechanism none)`);
    return { member: memberOf(grants, request, undefined, ["read", "write", "net"]), launch: undefined, close: async () => undefined };
  }
  if (grants.net.length === 0) return fromBubblewrap(grants, request, bwrap, undefined);
  const nested = await bubblewrapFails(bwrap, true);
  if (nested !== undefined) {
    const why = `bubblewrap cannot give the server its granted destinations here: ${nested}`;
    if (!request.bestEffort) throw new WrapError({ code: "confine", detail: why });
    say(`--best-effort: ${why}; its files are confined, its network is NOT, and the record says so`);
    const sandbox = await sandboxArgs(grants, false);
    const member = memberOf(grants, request, bwrap, ["net"]);
    return { member, launch: (command, args) => ({ command: bwrap.path, args: [...sandbox, command, ...args] }), close: async () => undefined };
  }
  return fromBubblewrap(grants, request, bwrap, await NetGate.open(grants.net));
}

async function fromBubblewrap(grants: Grants, request: ConfineRequest, bwrap: Bubblewrap, gate: NetGate | undefined): Promise<Confined> {
  const sandbox = await sandboxArgs(grants, gate === undefined);
  const member = memberOf(grants, request, bwrap, []);
  if (gate === undefined)
    return { member, launch: (command, args) => ({ command: bwrap.path, args: [...sandbox, command, ...args] }), close: async () => undefined };
  const loopback = grants.net.filter(isLoopbackGrant);
  const launch = (command: string, args: readonly string[]): Launch => {
    const config: NetHelperConfig = {
      gate: gate.path,
      listen: loopback,
      proxy: loopback.length < grants.net.length,
      inner: [bwrap.path, ...sandbox, command, ...args],
    };
    return { command: bwrap.path, args: [...outerArgs(), process.execPath, "-e", netHelperSource(), JSON.stringify(config)] };
  };
  return { member, launch, close: () => gate.close() };
}

/** A destination the helper can listen on inside the namespace: a loopback address (or `localhost`). */
function isLoopbackGrant(grant: NetGrant): boolean {
  return grant.host === "localhost" || grant.host === "::1" || (isIP(grant.host) === 4 && grant.host.startsWith("127."));
}

function memberOf(grants: Grants, request: ConfineRequest, bwrap: Bubblewrap | undefined, notEnforced: Confinement["not_enforced"]): Confinement {
  const write = grants.write.map((g) => g.path);
  return {
    mechanism: bwrap === undefined ? "none" : "bubblewrap",
    version: bwrap?.version ?? "",
    read: [...grants.read.map((g) => g.path), ...write].sort(),
    write: [...write].sort(),
    net: grants.net.map((g) => g.text).sort(),
    exec_support: grants.execSupport,
    best_effort: request.bestEffort,
    not_enforced: notEnforced,
  };
}
