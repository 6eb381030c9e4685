import type { Readable, Writable } from "node:stream";
import { ChildServer, type ChildExit } from "./child-server.js";
import type { RelayEnd } from "./relay.js";
import type { Launch } from "./confine/confine.js";
import type { Notice } from "./notice.js";
import { HttpUpstream } from "./upstream-http.js";

/**
 * The server a relay pumps (SPEC §17.7, §17.10): a child process on stdio, or a Streamable
 * HTTP endpoint. Either is a stream of frames each way (a child's newline-framed bytes; an
 * HTTP server's messages, one a chunk) and a way to let it go once the relay has ended.
 */
export interface ServerSide {
  readonly kind: "child" | "url";
  readonly serverIn: Writable;
  readonly serverOut: Readable;
  /** A child's own exit, once it has exited; never for a URL. */
  exitStatus(): ChildExit | undefined;
  /** Let the server go, bounded: reap the child (its whole group), or end the HTTP session. */
  release(end: RelayEnd, stopping: boolean): Promise<void>;
}

/** What starts the server: a command, or a URL with its headers. */
export type ServerSpec =
  | {
      readonly code: "child";
      readonly command: string;
      readonly args: readonly string[];
      readonly env?: NodeJS.ProcessEnv;
      readonly cwd?: string;
      /** Held in a sandbox (`--confine`, SPEC §17.11): how to start it there. */
      readonly launch?: (command: string, args: readonly string[]) => Launch;
    }
  | { readonly code: "url"; readonly url: URL; readonly headers: Readonly<Record<string, string>> };

/** After the client hangs up, how long a child that still runs is given to exit before it is ended. */
const REAP_MS = 5000;
/** The same after a signal: an MCP client's close() sends SIGKILL 2 s after SIGTERM. */
const STOP_REAP_MS = 500;

/** Where a server's words go, and the bound on its messages. */
export interface ServerSurroundings {
  readonly stderr: Writable;
  readonly say: (text: string) => void;
  readonly maxFrameBytes: number;
  readonly onNotice: (notice: Notice) => void;
}

/** Start the server. Throws `SpawnError` when a command cannot be started; nothing is relayed then. */
export async function openServer(spec: ServerSpec, around: ServerSurroundings): Promise<ServerSide> {
  const { stderr, say } = around;
  if (spec.code === "url") {
    // A message of the server's over the bound is dropped as it comes, as on stdio (SPEC §17.1).
    const bound = {
      maxMessageBytes: around.maxFrameBytes,
      onOversize: (bytes: number) => around.onNotice({ code: "oversize_frame", from: "server", bytes, limit: around.maxFrameBytes }),
    };
    const upstream = new HttpUpstream({ url: spec.url, headers: spec.headers, onFailure: say, bound });
    return {
      kind: "url",
      serverIn: upstream.serverIn,
      serverOut: upstream.serverOut,
      exitStatus: () => undefined,
      release: () => upstream.close(),
    };
  }
  const child = await ChildServer.start(spec);
  child.teeStderr(stderr);
  return {
    kind: "child",
    serverIn: child.serverIn,
    serverOut: child.serverOut,
    exitStatus: () => child.exitStatus,
    // A server still running after its silence outlasted the grace, or after wrap was told to
    // stop, is asked to terminate at once; one whose output ended is given time to exit.
    release: (end, stopping) => child.release(stopping ? STOP_REAP_MS : REAP_MS, end.why.code !== "child_exited"),
  };
}
