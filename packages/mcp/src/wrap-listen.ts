import type { Writable } from "node:stream";
import { unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { HttpClientSide, type Closing } from "./http-client-side.js";
import { Listener, type Connection } from "./listener.js";
import type { Notice } from "./notice.js";
import type { McpRecorder } from "./recorder.js";
import { Relay, type RelayEnd } from "./relay.js";
import { FaultError, RequestDigest } from "@aegis/format";
import { openServer, type ServerSpec } from "./server-side.js";

/**
 * `aegis wrap --listen` (SPEC §17.10): serve Streamable HTTP until a signal, every client
 * session a relay of its own in front of a server of its own, all recorded in one Session
 * through one writer, one Policy Set and one set of parks.
 */
export interface Serving {
  readonly host: string;
  readonly port: number;
  /** The bearer token every request must carry: one on every bind (SPEC §17.10). */
  readonly token: string;
  /** Where the token is kept, to say so on stderr (never the token); none when it was given. */
  readonly tokenFile: string | undefined;
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
export class ListenError extends FaultError<{ readonly detail: string }> {
  constructor(detail: string) {
    super("ListenError", { detail }, (f) => f.detail);
  }
}

export async function serveHttp(serving: Serving): Promise<Served> {
  const live = new Set<Live>();
  /** Connections being opened: a stop waits for them, then stops them with the rest. */
  const opening = new Set<Promise<Connection>>();
  let stoppingWith: NodeJS.Signals | undefined;
  let failure: Error | undefined;
  let stopRequested: (signal: NodeJS.Signals | undefined) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals | undefined>((resolve) => (stopRequested = resolve));

  const connect = async (sessionId: string | undefined): Promise<Live> => {
    const recorder = serving.recorder();
    const server = await openServer(serving.server, serving);
    const client = new HttpClientSide(sessionId === undefined ? {} : { "mcp-session-id": sessionId });
    const relay = new Relay(
      { clientIn: client.clientIn, clientOut: client.clientOut, serverIn: server.serverIn, serverOut: server.serverOut, serverFramed: server.kind === "url" },
      {
        recorder,
        maxFrameBytes: serving.maxFrameBytes,
        graceMs: serving.graceMs,
        stopGraceMs: serving.stopGraceMs,
        onNotice: serving.onNotice,
        // The listener hands the relay each message written as SPEC §17.10 says: nothing to write again.
        sides: { client: "http", server: server.kind },
      },
    );
    let stopping = false;
    const ended = (async (): Promise<RelayEnd> => {
      const end = await relay.run();
      await recorder.finish(end.why);
      client.closeAll(closingOf(end));
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
    // A connection whose server started as the stop began is stopped with the others.
    if (stoppingWith !== undefined) connection.stop(stoppingWith);
    return connection;
  };
  const open = (sessionId: string | undefined): Promise<Connection> => {
    // The listener answers 503 once stopping; this is for a request already past that check.
    if (stoppingWith !== undefined) return Promise.reject(new Error("aegis wrap is stopping"));
    const opened = connect(sessionId);
    opening.add(opened);
    void opened.then(
      () => opening.delete(opened),
      () => opening.delete(opened),
    );
    return opened;
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
  // The token is never printed: where it is kept, or that it was given.
  serving.say(`listening on ${listener.url} (bearer token ${serving.tokenFile === undefined ? "given" : `in ${serving.tokenFile}`})`);
  const onSignal = (signal: NodeJS.Signals): void => stopRequested(signal);
  for (const s of serving.signals) process.on(s, onSignal);
  try {
    const signalled = await stopped;
    stoppingWith = signalled ?? "SIGTERM";
    // Nothing new opens from here on: a late request is answered 503 and runs nothing.
    listener.stop();
    await Promise.allSettled([...opening]);
    const all = [...live];
    for (const connection of all) connection.stop(stoppingWith);
    await Promise.allSettled(all.map((c) => c.ended));
    listener.destroy();
    return { signalled, failure };
  } finally {
    for (const s of serving.signals) process.off(s, onSignal);
  }
}

/** Why an HTTP exchange still open when its connection ended is answered with an error, and which. */
function closingOf(end: RelayEnd): Closing {
  const stopping = (why: string): Closing => ({ status: 503, message: `aegis wrap is stopping: ${why}`, code: -32000 });
  const gone = (why: string): Closing => ({ status: 502, message: `aegis wrap: the server of this session is gone: ${why}`, code: -32000 });
  if (end.failure !== undefined) return stopping("the record could not be written");
  return match(end.why)
    .with({ code: "signalled" }, { code: "stopped" }, (w) => stopping(`it received ${w.signal}`))
    .with({ code: "child_exited" }, () => gone("it exited"))
    .with({ code: "connection_lost" }, () => gone("the connection to it ended"))
    .with({ code: "grace_expired" }, { code: "server_silent" }, () => gone("it did not answer within the grace"))
    .with({ code: "cancelled" }, { code: "notification" }, { code: "transport_closed" }, () => gone("its relay ended"))
    .exhaustive(unmatched);
}

function answerOf(verdict: Awaited<ReturnType<McpRecorder["admit"]>>): Buffer | undefined {
  return verdict.code === "answer" ? verdict.frame : verdict.code === "failed" ? verdict.frame : undefined;
}
