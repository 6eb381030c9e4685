import { asError } from "@aegis/format/internal";
import { DEFAULT_MAX_FRAME_BYTES } from "./frames.js";
import type { RelayEnd } from "./relay.js";
import type { ServerSpec } from "./server-side.js";
import { isLoopback } from "./listener.js";
import { listenToken, listenTokenPath } from "./listen-token.js";
import { prepareConfinement } from "./confine/confine.js";
import { programExists } from "./program.js";
import { Resources } from "./resources.js";
import { WrapError } from "./wrap-error.js";
import type { WrapOptions } from "./wrap-options.js";
import { SignalStop, relayStdio, serveSessions, start, type GuardedListen, type Ran } from "./wrap-start.js";

export { WrapError, type WrapFault } from "./wrap-error.js";
export type { WrapOptions } from "./wrap-options.js";

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
  const stderr = options.stderr ?? process.stderr;
  const say = (text: string): void => void stderr.write(`aegis wrap: ${text}\n`);
  const given = serverSpecOf(options);

  // A server that is not there is refused before the record is touched: no empty Session.
  if (given.code === "child" && !(await programExists(given.command, given.env, given.cwd)))
    throw new WrapError({ code: "spawn", command: given.command, detail: NO_SUCH_PROGRAM });
  // The listener's token too: a wrap that could not guard its door starts nothing.
  const listen = options.listen === undefined ? undefined : await guardedListen(options.listen, options.audit);
  // So does one asked to confine the server that cannot (SPEC §17.11), unless best effort.
  const confined = options.confine === undefined ? undefined : await prepareConfinement(options.confine, options.env, options.cwd ?? process.cwd(), say);
  // Each thing opened is pushed with its close; a failed start closes them, last first.
  const resources = new Resources();
  if (confined !== undefined) resources.push(() => confined.close());
  // Every server wrap starts is held, the one of each --listen session too.
  const server = given.code === "child" && confined?.launch !== undefined ? { ...given, launch: confined.launch } : given;
  const started = await start(options, server, resources, say, confined?.member).catch(async (error: unknown) => {
    await resources.closeAll();
    throw error;
  });
  const signals = options.signals ?? ["SIGINT", "SIGTERM", "SIGHUP"];
  const limits = { maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, graceMs: options.graceMs ?? GRACE_MS, stopGraceMs: STOP_GRACE_MS };
  const { serving } = started;
  let ran: Ran | undefined;
  if (serving !== undefined) resources.push(() => (ran === undefined ? undefined : serving.release(ran.end, ran.signalled !== undefined)));
  // The stdio relay's signals stop it cleanly until everything is closed, its shutdown included.
  const stopping = serving === undefined ? undefined : new SignalStop(signals);
  let failure: Error | undefined;
  try {
    // start() opens the one server unless wrap listens, where each client session gets its own.
    if (serving !== undefined) ran = await relayStdio(options, serving, started, stopping, limits);
    else if (listen !== undefined) ran = await serveSessions(listen, server, started, { ...limits, signals, stderr, say });
    else throw new Error("wrap has neither a server nor a listener");
    failure = ran.failure;
  } finally {
    // The record first: its close Line is written before the server is waited for, as a
    // client's close() sends SIGKILL 2 s after SIGTERM. Then the rest, last opened first.
    failure ??= await started.closeRecord().then(() => undefined, asError);
    failure ??= await resources.closeAll();
    stopping?.detach();
    stdin.pause();
    if ("destroy" in stdin && typeof stdin.destroy === "function") stdin.destroy();
  }
  const { end, signalled } = ran;
  if (end.serverEndedFirst)
    say(serving?.kind === "url" ? "the connection to the server ended before the client closed stdin" : "child process exited before the client closed stdin");
  if (serving?.exitStatus()?.notStarted === true) say(NOT_STARTED);
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
    if (options.confine !== undefined)
      throw new WrapError({ code: "options", detail: "confinement holds a server wrap starts, and with a URL there is no process to hold" });
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

/**
 * The listener's address and its bearer token (SPEC §17.10): the one given, or the one kept in
 * `<audit>.listen-token`, made there the first time. A token on every bind: every local user
 * can reach a loopback port.
 */
async function guardedListen(listen: NonNullable<WrapOptions["listen"]>, audit: string): Promise<GuardedListen> {
  if (listen.token !== undefined) return { host: listen.host, port: listen.port, token: listen.token, tokenFile: undefined };
  const tokenFile = listenTokenPath(audit);
  return { host: listen.host, port: listen.port, token: await listenToken(tokenFile), tokenFile };
}

const NO_SUCH_PROGRAM = "no such program (is it on PATH?)";
/** The reference's hint when a confined server cannot even start: deny by default holds back what it needs. */
const NOT_STARTED =
  "the server could not start inside its confinement: grant what it needs to run, --allow-exec-support for a dynamically linked program (its loader and libraries) and --allow-read for its own code";

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
