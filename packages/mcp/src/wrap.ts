import { unreachable, describeRecoveredLock } from "@aegis/format/internal";
import { ChainWriter, ChainWriterError, type SigningKey } from "@aegis/format";
import type { Readable, Writable } from "node:stream";
import { EnvelopeError, EnvelopeStore } from "@aegis/envelope";
import type { Bindings, PolicySet } from "@aegis/policy";
import { match } from "ts-pattern";
import { openCheckpointedWriter, type CheckpointedWriter, type CheckpointingOptions } from "@aegis/proof";
import { ControlError, listenControl, type ControlServer } from "./control.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./frames.js";
import { gateFor } from "./gate.js";
import { describeNotice, type Notice } from "./notice.js";
import { summarizePark } from "./park-summary.js";
import { recordParkAnswer } from "./parks.js";
import { CallIds, McpRecorder } from "./recorder.js";
import type { RefusalStyle } from "./refusal.js";
import { Relay, type RelayEnd } from "./relay.js";
import { SpawnError } from "./child-server.js";
import { openServer, type ServerSide, type ServerSpec } from "./server-side.js";
import { UpstreamError } from "./upstream-http.js";
import { ListenError, serveHttp } from "./wrap-listen.js";
import { isLoopback } from "./listener.js";
import { programExists } from "./program.js";
import type { LiveExport } from "./otel/live.js";
import type { OtlpOptions } from "./otel/options.js";

/**
 * The options of {@link runWrap}, which is `aegis wrap` as a library (SPEC §17): start an MCP
 * server as a child process (or reach one over Streamable HTTP), relay between it and the
 * client (on this process's stdio, or over Streamable HTTP), record every `tools/call` it
 * carries, and (with a Policy Set) refuse the ones the set does not allow.
 */
export interface WrapOptions {
  /** The server's program: give it, or `url`. */
  readonly command?: string;
  /** The server's arguments, passed to it as they are (no shell). */
  readonly args?: readonly string[];
  /** A Streamable HTTP server to relay to instead of a command (SPEC §17.10), through the MCP SDK's client transport. */
  readonly url?: string;
  /** Request headers on every request to `url`; a value may be a secret, and is never printed. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Serve Streamable HTTP to clients at `http://<host>:<port>/mcp` instead of relaying this
   * process's stdio (SPEC §17.10). Off a loopback address, `token` is required: the bearer
   * token every request must present.
   */
  readonly listen?: { readonly host: string; readonly port: number; readonly token?: string };
  /** The record file: a new Session is appended. */
  readonly audit: string;
  /** The key that signs every Line of the Session. */
  readonly key: SigningKey;
  /** An Envelope store directory for the verbatim bytes (created when absent). */
  readonly envelope?: string;
  /** A Policy Set to enforce (SPEC §17.3): a call it does not allow never reaches the server. */
  readonly policy?: PolicySet;
  /** Where each tool's path or URL lies in its request, for the axes `policy` decides on (SPEC §17.4). */
  readonly bindings?: Bindings;
  /** `decision_axes.role` of every call under `policy`: the role the agent runs as. */
  readonly role?: string;
  /** `decision_axes.session` of every call under `policy`: the set's session scope, not the record's Session. */
  readonly session?: string;
  /** Follow symbolic links in bound paths (default true). */
  readonly followSymlinks?: boolean;
  /**
   * The control socket for approvals, when a Policy Set is given: default
   * `<audit>.control`; `null` for none.
   */
  readonly control?: string | null;
  /**
   * A group id to open the control socket to (SPEC §17.5): owned by it, mode 0660, so that
   * its members can approve. Without it, the socket is wrap's own user's alone (0600).
   */
  readonly controlGroup?: number;
  /**
   * Checkpoint the record as it is written (SPEC §19.5): every `everyLines` durable Lines,
   * `everyMs` after an uncovered one, and after the close, into `<audit>.checkpoint`.
   */
  readonly checkpoints?: CheckpointingOptions;
  /**
   * How a refused `tools/call` is answered (SPEC §17.3): `tool-result` (default), a result
   * with `isError` that the model is shown; `reference`, the Rust reference's JSON-RPC error.
   */
  readonly refusal?: RefusalStyle;
  /** The longest frame read, in bytes (default 256 MiB); a longer one is counted and dropped (SPEC §17.1). */
  readonly maxFrameBytes?: number;
  /** Default 5000: the server's silence wrap waits out after the client hangs up. */
  readonly graceMs?: number;
  /** Where the client's frames are read from (default `process.stdin`). */
  readonly stdin?: Readable;
  /** Where the server's frames go to the client (default `process.stdout`): JSON-RPC only. */
  readonly stdout?: Writable;
  /** Where the server's stderr is copied and wrap's notices are written (default `process.stderr`). */
  readonly stderr?: Writable;
  /** The server's environment (default this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The server's working directory (default this process's). */
  readonly cwd?: string;
  /** Stop on these signals, closing the Session cleanly (default SIGINT, SIGTERM, SIGHUP). */
  readonly signals?: readonly NodeJS.Signals[];
  /**
   * Export each call's OpenTelemetry span as it ends (SPEC Appendix A.5), over OTLP to where
   * this process's `OTEL_EXPORTER_OTLP_*` variables say: through a batching processor, never
   * on a call's path, and a failure to export never touches the record. Needs the
   * OpenTelemetry packages, optional peers of `@aegis/mcp` (ADR 0024).
   */
  readonly otlp?: OtlpOptions;
}

/** Why wrap could not start. Nothing was relayed; no server is left running. */
export type WrapFault =
  | { readonly code: "writer"; readonly error: ChainWriterError }
  | { readonly code: "envelope"; readonly error: EnvelopeError }
  | { readonly code: "control"; readonly error: ControlError }
  | { readonly code: "spawn"; readonly command: string; readonly detail: string }
  /** Neither a command nor a URL, or both; `listen` off loopback without a token. */
  | { readonly code: "options"; readonly detail: string }
  /** The Streamable HTTP server could not be reached through the SDK's transport. */
  | { readonly code: "upstream"; readonly detail: string }
  /** The address to serve Streamable HTTP on could not be listened on. */
  | { readonly code: "listen"; readonly detail: string }
  /** `checkpoints` was asked for and the record does not verify as far as it goes: it is not checkpointed. */
  | { readonly code: "checkpoints"; readonly detail: string }
  /** `otlp` was asked for and the OpenTelemetry export could not be set up: its packages are missing, or the protocol is not one. */
  | { readonly code: "otlp"; readonly detail: string };

/** What {@link runWrap} throws when it could not start (SPEC §17.7): match on its `fault`. */
export class WrapError extends Error {
  /** `"WrapError"`, so that a printed error or stack trace names its class, not `Error`. */
  override readonly name = "WrapError";
  constructor(
    /** What could not be opened or started, as a value to match on by its `code`. */
    readonly fault: WrapFault,
  ) {
    super(describeWrapFault(fault));
  }
}

/** One line saying why wrap could not start, for a person: `aegis wrap` prints it after `error:`. */
export function describeWrapFault(fault: WrapFault): string {
  return match(fault)
    .with({ code: "writer" }, (f) => f.error.message)
    .with({ code: "envelope" }, (f) => f.error.message)
    .with({ code: "control" }, (f) => `control socket ${f.error.path}: ${f.error.message}`)
    .with({ code: "spawn" }, (f) => `could not start ${f.command}: ${f.detail}`)
    .with({ code: "options" }, { code: "upstream" }, { code: "listen" }, (f) => f.detail)
    .with({ code: "checkpoints" }, (f) => f.detail)
    .with({ code: "otlp" }, (f) => `--otlp: ${f.detail}`)
    .exhaustive(unreachable);
}

/** How a wrap ended: the Session is closed and the server has exited or been killed. */
export interface WrapResult {
  /** What the process should exit with (SPEC §17.7). */
  readonly exitCode: number;
  /** How the relay ended, and so why the calls still in flight went unanswered. */
  readonly end: RelayEnd;
  /** The child's own exit, when it exited (code, or the signal that ended it). */
  readonly child: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined;
  /** A failure to record, or to close the record, when there was one. */
  readonly failure: Error | undefined;
}

const GRACE_MS = 5000;
/** A signal's budget: an MCP client's close() sends SIGKILL 2 s after SIGTERM. */
const STOP_GRACE_MS = 500;
const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Run `aegis wrap` (SPEC §17): open the record (and the Envelope and control socket), start
 * the server, relay until it ends, record an outcome for every call left in flight, close
 * the Session, and resolve with the exit code to use. While it runs, `signals` sent to this
 * process stop it cleanly (SPEC §17.7). A failure to record once running does not throw: it
 * is in {@link WrapResult.failure}, and the exit code is 1.
 *
 * @throws WrapError when wrap could not start: the record, the Envelope or the control socket
 * could not be opened, or the server could not be spawned. Nothing was relayed then, and no
 * server is left running.
 */
export async function runWrap(options: WrapOptions): Promise<WrapResult> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const say = (text: string): void => void stderr.write(`aegis wrap: ${text}\n`);
  const server = serverSpecOf(options);

  // A server that is not there is refused before the record is touched: no empty Session.
  if (server.code === "child" && !(await programExists(server.command, server.env, server.cwd)))
    throw new WrapError({ code: "spawn", command: server.command, detail: NO_SUCH_PROGRAM });
  // The spans' exporter first: it follows every Line from the open on (SPEC Appendix A.5).
  const live = options.otlp === undefined ? undefined : await startOtlp(options.otlp, say);
  // The record and its Envelope before the server: a wrap that cannot record starts nothing.
  const envelope = options.envelope === undefined ? undefined : await openEnvelope(options.envelope);
  let writer: ChainWriter;
  let checkpointed: CheckpointedWriter | undefined;
  try {
    const sink = live === undefined ? envelope : live.sink(envelope);
    const writerOptions = { key: options.key, ...(sink === undefined ? {} : { envelope: sink }), ...(live === undefined ? {} : { onLine: live.onLine }) };
    if (options.checkpoints === undefined) {
      writer = await ChainWriter.open(options.audit, writerOptions);
    } else {
      checkpointed = await openCheckpointedWriter(options.audit, writerOptions, {
        ...options.checkpoints,
        onError: (error) => {
          say(`a checkpoint was not written: ${error.message}`);
          options.checkpoints?.onError?.(error);
        },
      });
      writer = checkpointed.writer;
      say(`checkpoints: ${checkpointed.sidecar}`);
    }
  } catch (error) {
    await envelope?.close().catch(() => undefined);
    await live?.shutdown();
    if (error instanceof ChainWriterError) throw new WrapError({ code: "writer", error });
    if (error instanceof RangeError) throw new WrapError({ code: "checkpoints", detail: error.message });
    throw error;
  }
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

  let control: ControlServer | undefined;
  let serving: ServerSide | undefined;
  const recorder = newRecorder();
  try {
    if (controlPath !== undefined && gate !== undefined) {
      control = await listenControl(controlPath, {
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
      say(`approvals: control socket ${control.path}${options.controlGroup === undefined ? "" : `, open to group ${options.controlGroup}`}`);
    }
    // With --listen, servers are started per client session, as sessions begin.
    if (options.listen === undefined) serving = await openServer(server, stderr, say).catch(startFault);
  } catch (error) {
    await control?.close();
    await writer.close().catch(() => undefined);
    await envelope?.close().catch(() => undefined);
    await live?.shutdown();
    throw error;
  }

  const signals = options.signals ?? ["SIGINT", "SIGTERM", "SIGHUP"];
  const limits = { maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, graceMs: options.graceMs ?? GRACE_MS, stopGraceMs: STOP_GRACE_MS };
  let signalled: NodeJS.Signals | undefined;
  let end: RelayEnd | undefined;
  let failure: Error | undefined;
  let relay: Relay | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled ??= signal;
    relay?.stop(signal);
  };
  try {
    if (serving === undefined) {
      const listen = options.listen ?? { host: "127.0.0.1", port: 0 };
      const served = await serveHttp({
        host: listen.host,
        port: listen.port,
        token: listen.token,
        server,
        recorder: newRecorder,
        ...limits,
        signals,
        stderr,
        say,
        onNotice,
      }).catch(startFault);
      signalled = served.signalled;
      failure = served.failure;
      end = { why: { code: "signalled", signal: signalled ?? "SIGTERM" }, serverEndedFirst: false, failure };
    } else {
      for (const s of signals) process.on(s, onSignal);
      relay = new Relay(
        { clientIn: stdin, clientOut: stdout, serverIn: serving.serverIn, serverOut: serving.serverOut },
        // A message that crosses HTTP is written as the SDK's transport writes it (SPEC §17.10).
        { recorder, ...limits, onNotice, sides: { client: "stdio", server: serving.kind }, reencode: serving.kind === "url" },
      );
      end = await relay.run();
      await recorder.finish(end.why);
      failure = recorder.failed;
    }
  } finally {
    try {
      // With checkpoints, the last one is written after the close and covers it.
      if (checkpointed === undefined) await writer.close();
      else await checkpointed.close();
    } catch (error) {
      failure ??= error instanceof Error ? error : new Error(String(error));
    }
    await envelope?.close().catch((error: unknown) => void (failure ??= error instanceof Error ? error : new Error(String(error))));
    if (serving !== undefined && end !== undefined) await serving.release(end, signalled !== undefined);
    await control?.close();
    // The record is closed and the server gone: the last spans may take their (bounded) time to leave.
    await live?.shutdown();
    for (const s of signals) process.off(s, onSignal);
    stdin.pause();
    if ("destroy" in stdin && typeof stdin.destroy === "function") stdin.destroy();
  }
  if (end === undefined) throw new Error("the relay ended without an end");
  if (end.serverEndedFirst)
    say(serving?.kind === "url" ? "the connection to the server ended before the client closed stdin" : "child process exited before the client closed stdin");
  if (failure !== undefined) say(`the record is incomplete: ${failure.message}`);
  const child = serving?.exitStatus();
  // Without a child of its own (a URL; a server per session), wrap's code is 0 unless something failed.
  const own = serving?.kind === "child" ? child : { code: 0, signal: null };
  return { exitCode: exitCodeOf(end, own, signalled, failure), end, child, failure };
}

/** What starts the server (SPEC §17.10): a command or a URL, never both; checked before anything is opened. */
function serverSpecOf(options: WrapOptions): ServerSpec {
  const listen = options.listen;
  if (listen !== undefined && listen.token === undefined && !isLoopback(listen.host)) {
    throw new WrapError({
      code: "options",
      detail: `listening on ${listen.host}, off loopback, needs a bearer token: any page or host that reaches it could call tools`,
    });
  }
  if (options.url !== undefined) {
    if (options.command !== undefined) throw new WrapError({ code: "options", detail: "give the server as a command or as a URL, not both" });
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw new WrapError({ code: "options", detail: `${JSON.stringify(options.url)} is not a URL` });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new WrapError({ code: "options", detail: `the server's URL must be http: or https:, not ${url.protocol}` });
    return { code: "url", url, headers: options.headers ?? {} };
  }
  if (options.command === undefined) throw new WrapError({ code: "options", detail: "no server to wrap: give a command or a URL" });
  return {
    code: "child",
    command: options.command,
    args: options.args ?? [],
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  };
}

/** A server that could not be started, or an address that could not be listened on: a WrapError, nothing relayed. */
function startFault(error: unknown): never {
  if (error instanceof SpawnError) throw new WrapError({ code: "spawn", command: error.command, detail: error.detail });
  if (error instanceof UpstreamError) throw new WrapError({ code: "upstream", detail: error.message });
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

const NO_SUCH_PROGRAM = "no such program (is it on PATH?)";

async function openEnvelope(dir: string): Promise<EnvelopeStore> {
  try {
    return await EnvelopeStore.open(dir);
  } catch (error) {
    if (error instanceof EnvelopeError) throw new WrapError({ code: "envelope", error });
    throw error;
  }
}

/**
 * The exit code (SPEC §17.7): the server's own, so a script around the server reads the same
 * with wrap in front; 1 when it was killed by a signal, or left before its client, or the
 * record failed; 128 + n when wrap itself was stopped by signal n.
 */
function exitCodeOf(
  end: RelayEnd,
  child: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  signalled: NodeJS.Signals | undefined,
  failure: Error | undefined,
): number {
  if (failure !== undefined) return 1;
  if (signalled !== undefined) return 128 + (SIGNAL_NUMBERS[signalled] ?? 15);
  const code = child?.code ?? null;
  const own = code === null ? 1 : code === 0 ? 0 : code & 0xff || 1;
  return end.serverEndedFirst && own === 0 ? 1 : own;
}
