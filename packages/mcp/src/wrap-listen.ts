import type { Writable } from "node:stream";
import { HttpClientSide } from "./http-client-side.js";
import { Listener, type Connection } from "./listener.js";
import type { Notice } from "./notice.js";
import type { McpRecorder } from "./recorder.js";
import { Relay, type RelayEnd } from "./relay.js";
import { RequestDigest } from "@aegis/format";
import { openServer, type ServerSpec } from "./server-side.js";

/**
 * `aegis wrap --listen` (SPEC §17.10): serve Streamable HTTP until a signal, every client
 * session a relay of its own in front of a server of its own, all recorded in one Session
 * through one writer, one Policy Set and one set of parks.
 */
export interface Serving {
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly server: ServerSpec;
  /** A recorder for a new connection, on the shared writer, gate and call ids. */
  readonly recorder: () => McpRecorder;
  readonly maxFrameBytes: number;
  readonly graceMs: number;
  readonly stopGraceMs: number;
  readonly signals: readonly NodeJS.Signals[];
  readonly stderr: Writable;
  readonly say: (text: string) => void;
  readonly onNotice: (notice: Notice) => void;
}

/** How serving ended. */
export interface Served {
  readonly signalled: NodeJS.Signals | undefined;
  readonly failure: Error | undefined;
}

interface Live extends Connection {
  stop(signal: string): void;
}

/** Thrown when the address cannot be listened on: nothing was served. */
export class ListenError extends Error {
  override readonly name = "ListenError";
}

export async function serveHttp(serving: Serving): Promise<Served> {
  const live = new Set<Live>();
  let failure: Error | undefined;
  let stopRequested: (signal: NodeJS.Signals | undefined) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals | undefined>((resolve) => (stopRequested = resolve));

  const open = async (sessionId: string | undefined): Promise<Connection> => {
    const recorder = serving.recorder();
    const server = await openServer(serving.server, serving.stderr, serving.say);
    const client = new HttpClientSide(sessionId === undefined ? {} : { "mcp-session-id": sessionId });
    const relay = new Relay(
      { clientIn: client.clientIn, clientOut: client.clientOut, serverIn: server.serverIn, serverOut: server.serverOut },
      {
        recorder,
        maxFrameBytes: serving.maxFrameBytes,
        graceMs: serving.graceMs,
        stopGraceMs: serving.stopGraceMs,
        onNotice: serving.onNotice,
        sides: { client: "http", server: server.kind },
        reencode: true,
      },
    );
    let stopping = false;
    const ended = (async (): Promise<RelayEnd> => {
      const end = await relay.run();
      await recorder.finish(end.why);
      client.closeAll();
      await server.release(end, stopping);
      return end;
    })();
    const connection: Live = {
      client,
      refuse: async (body) => answerOf(await recorder.admit(body)),
      refuseOversize: async (bytes, sha256) => answerOf(await recorder.refuseOversize(bytes, RequestDigest.parse(sha256), serving.maxFrameBytes)),
      hangUp: () => client.end(),
      ended,
      stop: (signal) => {
        stopping = true;
        relay.stop(signal);
      },
    };
    live.add(connection);
    void ended.then((end) => {
      live.delete(connection);
      // No call may run without its record: once it cannot be written, wrap stops serving.
      if (end.failure !== undefined) {
        failure ??= end.failure;
        stopRequested(undefined);
      }
      if (end.serverEndedFirst) serving.say(`the server of ${sessionId === undefined ? "the requests naming no session" : `session ${sessionId}`} ended`);
    });
    return connection;
  };

  let listener: Listener;
  try {
    listener = await Listener.start({
      host: serving.host,
      port: serving.port,
      token: serving.token,
      maxBodyBytes: serving.maxFrameBytes,
      open,
      say: serving.say,
    });
  } catch (error) {
    throw new ListenError(`cannot listen on ${serving.host}:${serving.port}: ${error instanceof Error ? error.message : String(error)}`);
  }
  serving.say(`listening on ${listener.url}${serving.token === undefined ? "" : " (a bearer token is required)"}`);
  const onSignal = (signal: NodeJS.Signals): void => stopRequested(signal);
  for (const s of serving.signals) process.on(s, onSignal);
  try {
    const signalled = await stopped;
    listener.stop();
    // A connection being opened now is stopped with the others.
    await listener.sharedConnection()?.catch(() => undefined);
    const all = [...live];
    for (const connection of all) connection.stop(signalled ?? "SIGTERM");
    await Promise.allSettled(all.map((c) => c.ended));
    listener.destroy();
    return { signalled, failure };
  } finally {
    for (const s of serving.signals) process.off(s, onSignal);
  }
}

function answerOf(verdict: Awaited<ReturnType<McpRecorder["admit"]>>): Buffer | undefined {
  return verdict.code === "answer" ? verdict.frame : verdict.code === "failed" ? verdict.frame : undefined;
}
