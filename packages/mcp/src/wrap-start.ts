import { RecordWriter, RecordWriterError, type RecordWriterOptions } from "@aegis/format";
import { describeRecoveredLock } from "@aegis/format/internal";
import type { Writable } from "node:stream";
import { EnvelopeError, EnvelopeStore } from "@aegis/envelope";
import { openCheckpointedWriter } from "@aegis/proof";
import { ControlError, listenControl } from "./control.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./frames.js";
import { gateFor } from "./gate.js";
import { describeNotice, type Notice } from "./notice.js";
import { summarizePark } from "./park-summary.js";
import { recordParkAnswer } from "./parks.js";
import { CallIds, McpRecorder } from "./recorder.js";
import { Relay, type RelayEnd } from "./relay.js";
import { SpawnError } from "./child-server.js";
import { openServer, type ServerSide, type ServerSpec } from "./server-side.js";
import { ListenError, serveHttp } from "./wrap-listen.js";
import type { Resources } from "./resources.js";
import type { LiveExport } from "./otel/live.js";
import type { OtlpOptions } from "./otel/options.js";
import { WrapError } from "./wrap-error.js";
import type { WrapOptions } from "./wrap-options.js";

// What runWrap opens and runs, each step its own function (ADR 0029): wrap.ts keeps the order.

/** What a started wrap holds: each of it is on the resource stack. */
export interface Started {
  readonly writer: RecordWriter;
  /** Close the record (and write the last checkpoint): once, before the rest is closed. */
  readonly closeRecord: () => Promise<void>;
  readonly newRecorder: () => McpRecorder;
  readonly onNotice: (notice: Notice) => void;
  /** The one server, over stdio; undefined with `listen`, where each client session starts its own. */
  readonly serving: ServerSide | undefined;
}

/** Where wrap listens, and the bearer token every request must carry (SPEC §17.10). */
export interface GuardedListen {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  /** The file the token was read from or made in, to say where it is; none when it was given. */
  readonly tokenFile: string | undefined;
}

/** How the relaying ended. */
export interface Ran {
  readonly end: RelayEnd;
  readonly signalled: NodeJS.Signals | undefined;
  readonly failure: Error | undefined;
}

/**
 * Open, in order, the span exporter, the Envelope, the record, the control socket and the
 * server, pushing each one's close. A wrap that cannot record starts nothing.
 */
export async function start(
  options: WrapOptions,
  server: ServerSpec,
  resources: Resources,
  say: (text: string) => void,
  confinement: RecordWriterOptions["confinement"],
): Promise<Started> {
  const stderr = options.stderr ?? process.stderr;
  // The spans' exporter first: it follows every Line from the open on (SPEC Appendix A.5).
  const live = options.otlp === undefined ? undefined : await startOtlp(options.otlp, say);
  if (live !== undefined) resources.push(() => live.shutdown());
  const envelope = options.envelope === undefined ? undefined : await openEnvelope(options.envelope);
  if (envelope !== undefined) resources.push(() => envelope.close());
  const { writer, close } = await openRecord(options, live, envelope, say, confinement);
  const closeRecord = resources.push(close);
  // A lock a killed wrap left is taken back only when its process is gone; say so.
  for (const [what, recovered] of [
    [options.audit, writer.recoveredLock],
    [options.envelope, envelope?.recoveredLock],
  ] as const) {
    if (recovered !== undefined) say(`recovered the lock on ${what ?? ""}: ${describeRecoveredLock(recovered)}`);
  }
  const controlPath = options.policy === undefined || options.control === null ? undefined : (options.control ?? `${options.audit}.control`);
  const onNotice = (notice: Notice): void => say(describeNotice(notice));
  const gate = gateFor(options);
  // One counter for every relay: with --listen, each client session records through its own.
  const callIds = new CallIds();
  const newRecorder = (): McpRecorder =>
    new McpRecorder({
      writer,
      ...(gate === undefined ? {} : { gate }),
      ...(envelope === undefined ? {} : { toolSpecs: envelope }),
      ...(controlPath === undefined ? {} : { control: controlPath }),
      ...(options.refusal === undefined ? {} : { refusal: options.refusal }),
      onNotice,
      callIds,
    });
  if (controlPath !== undefined && gate !== undefined) {
    const control = await listenControl(controlPath, {
      answer: async (id, answer) => {
        const r = await recordParkAnswer(gate.parks, writer, id, answer);
        return r.ok ? { ok: true, seq: r.appended.seq, lineHash: r.appended.lineHash } : r;
      },
      pending: () => gate.parks.pending().map(summarizePark),
      ...(options.controlGroup === undefined ? {} : { group: options.controlGroup }),
    }).catch((error: unknown) => {
      if (error instanceof ControlError) throw new WrapError({ code: "control", error });
      throw error;
    });
    resources.push(() => control.close());
    say(`approvals: control socket ${control.path}${options.controlGroup === undefined ? "" : `, open to group ${options.controlGroup}`}`);
  }
  // With --listen, servers are started per client session, as sessions begin.
  const around = { stderr, say, maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, onNotice };
  const serving = options.listen === undefined ? await openServer(server, around).catch(startFault) : undefined;
  return { writer, closeRecord, newRecorder, onNotice, serving };
}

/** The record, checkpointed when asked: its writer, and how to close it. */
async function openRecord(
  options: WrapOptions,
  live: LiveExport | undefined,
  envelope: EnvelopeStore | undefined,
  say: (text: string) => void,
  confinement: RecordWriterOptions["confinement"],
): Promise<{ readonly writer: RecordWriter; readonly close: () => Promise<void> }> {
  const sink = live === undefined ? envelope : live.sink(envelope);
  const writerOptions = {
    key: options.key,
    ...(sink === undefined ? {} : { envelope: sink }),
    ...(live === undefined ? {} : { onLine: live.onLine }),
    // The confinement in force is signed in the Session's open (SPEC §17.11).
    ...(confinement === undefined ? {} : { confinement }),
  };
  try {
    if (options.checkpoints === undefined) {
      const writer = await RecordWriter.open(options.audit, writerOptions);
      return { writer, close: async () => void (await writer.close()) };
    }
    const faulted = new Set<string>();
    const checkpointed = await openCheckpointedWriter(options.audit, writerOptions, {
      ...options.checkpoints,
      onError: (error) => {
        say(`a checkpoint was not written: ${error.message}`);
        options.checkpoints?.onError?.(error);
      },
      onWitness: (result) => {
        // Evidence is said each time, at once; a witness's fault once, until it cosigns again.
        if (result.code === "evidence") say(`witness ${result.url}: ${result.detail}`);
        else if (result.code === "fault" && !faulted.has(result.url))
          say(`witness ${result.url}: ${result.detail}; it did not cosign (said once, until it does)`);
        if (result.code === "fault") faulted.add(result.url);
        else faulted.delete(result.url);
        options.checkpoints?.onWitness?.(result);
      },
    });
    say(`checkpoints: ${checkpointed.sidecar}`);
    // With checkpoints, the last one is written after the close and covers it.
    return { writer: checkpointed.writer, close: async () => void (await checkpointed.close()) };
  } catch (error) {
    if (error instanceof RecordWriterError) throw new WrapError({ code: "writer", error });
    if (error instanceof RangeError) throw new WrapError({ code: "checkpoints", detail: error.message });
    throw error;
  }
}

export interface Limits {
  readonly maxFrameBytes: number;
  readonly graceMs: number;
  readonly stopGraceMs: number;
}

/** One client on stdio, one server: relay until either ends or a signal stops it. */
export async function relayStdio(options: WrapOptions, serving: ServerSide, started: Started, stopping: SignalStop | undefined, limits: Limits): Promise<Ran> {
  const recorder = started.newRecorder();
  const relay = new Relay(
    {
      clientIn: options.stdin ?? process.stdin,
      clientOut: options.stdout ?? process.stdout,
      serverIn: serving.serverIn,
      serverOut: serving.serverOut,
      serverFramed: serving.kind === "url",
    },
    // A message that crosses HTTP is written as the SDK's transport writes it (SPEC §17.10).
    { recorder, ...limits, onNotice: started.onNotice, sides: { client: "stdio", server: serving.kind }, reencode: serving.kind === "url" },
  );
  stopping?.forward((signal) => relay.stop(signal));
  const end = await relay.run();
  await recorder.finish(end.why);
  return { end, signalled: stopping?.signal, failure: recorder.failed };
}

/** `listen`: Streamable HTTP for clients, a server per client session, until a signal. */
export async function serveSessions(
  listen: GuardedListen,
  server: ServerSpec,
  started: Started,
  rest: Limits & { readonly signals: readonly NodeJS.Signals[]; readonly stderr: Writable; readonly say: (text: string) => void },
): Promise<Ran> {
  const served = await serveHttp({
    ...listen,
    server,
    recorder: started.newRecorder,
    ...rest,
    onNotice: started.onNotice,
  }).catch(startFault);
  return {
    end: { why: { code: "signalled", signal: served.signalled ?? "SIGTERM" }, serverEndedFirst: false, failure: served.failure },
    signalled: served.signalled,
    failure: served.failure,
  };
}

/** The signals that stop the stdio relay cleanly (SPEC §17.7): the first is kept, and each is passed on. */
export class SignalStop {
  signal: NodeJS.Signals | undefined;
  private target: ((signal: NodeJS.Signals) => void) | undefined;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.signal ??= signal;
    this.target?.(signal);
  };

  constructor(private readonly signals: readonly NodeJS.Signals[]) {
    for (const s of signals) process.on(s, this.onSignal);
  }

  forward(target: (signal: NodeJS.Signals) => void): void {
    this.target = target;
  }

  detach(): void {
    for (const s of this.signals) process.off(s, this.onSignal);
  }
}

/** A server that could not be started, or an address that could not be listened on: a WrapError, nothing relayed. */
function startFault(error: unknown): never {
  if (error instanceof SpawnError) throw new WrapError({ code: "spawn", command: error.command, detail: error.detail });
  if (error instanceof ListenError) throw new WrapError({ code: "listen", detail: error.message });
  throw error;
}

/** OpenTelemetry is loaded only now, when asked for (ADR 0024). */
async function startOtlp(otlp: OtlpOptions, say: (text: string) => void): Promise<LiveExport> {
  const [{ LiveExport }, { OtlpSetupError }] = await Promise.all([import("./otel/live.js"), import("./otel/sdk.js")]);
  try {
    return await LiveExport.start(otlp, say);
  } catch (error) {
    if (error instanceof OtlpSetupError) throw new WrapError({ code: "otlp", detail: error.message });
    throw error;
  }
}

async function openEnvelope(dir: string): Promise<EnvelopeStore> {
  try {
    return await EnvelopeStore.open(dir);
  } catch (error) {
    if (error instanceof EnvelopeError) throw new WrapError({ code: "envelope", error });
    throw error;
  }
}
