import { unreachable } from "@aegis/format/internal";
import { ChainWriter, ChainWriterError, describeRecoveredLock, type SigningKey } from "@aegis/format";
import { errnoOf, messageOf } from "@aegis/format/internal";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
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
import { McpRecorder } from "./recorder.js";
import type { RefusalStyle } from "./refusal.js";
import { Relay, type RelayEnd } from "./relay.js";

/**
 * The options of {@link runWrap}, which is `aegis wrap` as a library (SPEC §17): start an MCP
 * server as a child process, relay its stdio to this process's, record every `tools/call` it
 * carries, and (with a Policy Set) refuse the ones the set does not allow.
 */
export interface WrapOptions {
  /** The server's program and its arguments. */
  readonly command: string;
  /** The server's arguments, passed to it as they are (no shell). */
  readonly args: readonly string[];
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
}

/** Why wrap could not start. Nothing was relayed; no server is left running. */
export type WrapFault =
  | { readonly code: "writer"; readonly error: ChainWriterError }
  | { readonly code: "envelope"; readonly error: EnvelopeError }
  | { readonly code: "control"; readonly error: ControlError }
  | { readonly code: "spawn"; readonly command: string; readonly detail: string }
  /** `checkpoints` was asked for and the record does not verify as far as it goes: it is not checkpointed. */
  | { readonly code: "checkpoints"; readonly detail: string };

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
    .with({ code: "checkpoints" }, (f) => f.detail)
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
const REAP_MS = 5000;
/** A signal's budget: an MCP client's close() sends SIGKILL 2 s after SIGTERM. */
const STOP_GRACE_MS = 500;
const STOP_REAP_MS = 500;
const STDERR_DRAIN_MS = 2000;
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

  // The record and its Envelope before the server: a wrap that cannot record starts nothing.
  const envelope = options.envelope === undefined ? undefined : await openEnvelope(options.envelope);
  let writer: ChainWriter;
  let checkpointed: CheckpointedWriter | undefined;
  try {
    const writerOptions = { key: options.key, ...(envelope === undefined ? {} : { envelope }) };
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
  const recorder = new McpRecorder({
    writer,
    ...(gate === undefined ? {} : { gate }),
    ...(envelope === undefined ? {} : { toolSpecs: envelope }),
    ...(controlPath === undefined ? {} : { control: controlPath }),
    ...(options.refusal === undefined ? {} : { refusal: options.refusal }),
    onNotice,
  });

  let control: ControlServer | undefined;
  let child: ChildProcess;
  try {
    if (controlPath !== undefined && gate !== undefined) {
      control = await listenControl(controlPath, {
        answer: async (id, answer) => {
          const r = await recorder.answerPark(id, answer);
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
    child = await start(options);
  } catch (error) {
    await control?.close();
    await writer.close().catch(() => undefined);
    await envelope?.close().catch(() => undefined);
    throw error;
  }

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let childExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((e) => (childExit = e));
  const stderrDone = teeStderr(child, stderr);

  const { stdin: serverIn, stdout: serverOut } = child;
  if (serverIn === null || serverOut === null) throw new Error("the child was spawned without pipes");
  const relay = new Relay(
    { clientIn: stdin, clientOut: stdout, serverIn, serverOut },
    { recorder, maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, graceMs: options.graceMs ?? GRACE_MS, stopGraceMs: STOP_GRACE_MS, onNotice },
  );
  const signals = options.signals ?? ["SIGINT", "SIGTERM", "SIGHUP"];
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    signalled ??= signal;
    relay.stop(signal);
  };
  for (const s of signals) process.on(s, onSignal);

  let end: RelayEnd | undefined;
  let failure: Error | undefined;
  try {
    end = await relay.run();
    await recorder.finish(end.why);
    failure = recorder.failed;
  } finally {
    try {
      // With checkpoints, the last one is written after the close and covers it.
      if (checkpointed === undefined) await writer.close();
      else await checkpointed.close();
    } catch (error) {
      failure ??= error instanceof Error ? error : new Error(String(error));
    }
    await envelope?.close().catch((error: unknown) => void (failure ??= error instanceof Error ? error : new Error(String(error))));
    // A server still running after its silence outlasted the grace, or after wrap was told
    // to stop, is asked to terminate at once; one whose output ended is given time to exit.
    const stillWanted = end?.why.code === "child_exited";
    await reap(child, exited, signalled === undefined ? REAP_MS : STOP_REAP_MS, !stillWanted);
    await Promise.race([stderrDone, delay(STDERR_DRAIN_MS)]);
    // A process of the tree that outlived every signal must not keep wrap alive by its pipes.
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
    await control?.close();
    for (const s of signals) process.off(s, onSignal);
    stdin.pause();
    if ("destroy" in stdin && typeof stdin.destroy === "function") stdin.destroy();
  }
  if (end === undefined) throw new Error("the relay ended without an end");
  if (end.serverEndedFirst) say("child process exited before the client closed stdin");
  if (failure !== undefined) say(`the record is incomplete: ${failure.message}`);
  return { exitCode: exitCodeOf(end, childExit, signalled, failure), end, child: childExit, failure };
}

async function openEnvelope(dir: string): Promise<EnvelopeStore> {
  try {
    return await EnvelopeStore.open(dir);
  } catch (error) {
    if (error instanceof EnvelopeError) throw new WrapError({ code: "envelope", error });
    throw error;
  }
}

/** Spawn the server; resolves once it runs, so a bad command is an error before any relaying. */
async function start(options: WrapOptions): Promise<ChildProcess> {
  let child: ChildProcess;
  try {
    child = spawn(options.command, [...options.args], {
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: a server behind a shell or npx is a tree, and wrap ends the
      // whole tree, not only the process it started (SPEC §17.7).
      detached: true,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
  } catch (error) {
    // An empty program name, a NUL in an argument: refused before any process exists.
    throw new WrapError({ code: "spawn", command: options.command, detail: messageOf(error) });
  }
  try {
    await Promise.race([once(child, "spawn"), once(child, "error").then(([error]: unknown[]) => Promise.reject(error))]);
  } catch (error) {
    const detail = errnoOf(error) === "ENOENT" ? "no such program (is it on PATH?)" : error instanceof Error ? error.message : String(error);
    throw new WrapError({ code: "spawn", command: options.command, detail });
  }
  return child;
}

/** The server's stderr, byte for byte, on ours: never parsed, never merged into stdout. */
function teeStderr(child: ChildProcess, stderr: Writable): Promise<void> {
  const source = child.stderr;
  if (source === null) return Promise.resolve();
  source.on("data", (chunk: Buffer) => void stderr.write(chunk));
  return new Promise((resolve) => {
    source.once("end", resolve);
    source.once("error", () => resolve());
  });
}

/**
 * Wait for the child, bounded; then end its process group. Never an unbounded wait. The
 * group is signalled even when the child itself has exited: a shell or npx in front of the
 * server can exit and leave the server running, holding the pipes.
 */
async function reap(child: ChildProcess, exited: Promise<unknown>, ms: number, terminate: boolean): Promise<void> {
  const running = child.exitCode === null && child.signalCode === null;
  if (running && terminate) signalGroup(child, "SIGTERM");
  if (running && !(await Promise.race([exited.then(() => true), delay(ms).then(() => false)]))) {
    signalGroup(child, "SIGKILL");
    await Promise.race([exited, delay(2000)]);
  }
  // What is left of the tree once the child is gone: asked to end, then made to.
  if (signalGroup(child, "SIGTERM")) {
    await delay(Math.min(ms, STOP_REAP_MS));
    signalGroup(child, "SIGKILL");
  }
}

/** Signal the child's process group; false when no process of it is left. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
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
