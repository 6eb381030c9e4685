import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { errnoOf, messageOf } from "@aegis/format/internal";
import { pause, settlesWithin } from "./bounded.js";
import type { Launch } from "./confine/confine.js";
import { FaultError } from "@aegis/format";

/**
 * A stdio MCP server started as wrap's child (SPEC §17.7): its stdin and stdout are the
 * relay's server side, its stderr is copied to wrap's byte for byte, and it runs in a process
 * group of its own, which wrap ends whole.
 */
export interface ChildOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /**
   * Start the server held in a sandbox (`wrap --confine`, SPEC §17.11): the program that
   * starts it there, whose status (bubblewrap's `--json-status-fd`) comes on fd 3.
   */
  readonly launch?: (command: string, args: readonly string[]) => Launch;
}

/** The server could not be started. Nothing was relayed. */
export class SpawnError extends FaultError<{ readonly command: string; readonly detail: string }> {
  constructor(
    readonly command: string,
    readonly detail: string,
  ) {
    super("SpawnError", { command, detail }, (f) => `could not start ${f.command}: ${f.detail}`);
  }
}

export type ChildExit = {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Confined: the sandbox ended without the server's exit status, so the server never ran. */
  readonly notStarted?: true;
};

const STDERR_DRAIN_MS = 2000;
/** After the server's process has exited, what is left of its group gets this long between SIGTERM and SIGKILL. */
const GROUP_REAP_MS = 500;

export class ChildServer {
  readonly serverIn: Writable;
  readonly serverOut: Readable;
  readonly exited: Promise<ChildExit>;
  private exit: ChildExit | undefined;
  private stderrDone: Promise<void> = Promise.resolve();

  private constructor(
    private readonly child: ChildProcess,
    status: Promise<SandboxStatus> | undefined,
  ) {
    const { stdin, stdout } = child;
    if (stdin === null || stdout === null) throw new Error("the child was spawned without pipes");
    this.serverIn = stdin;
    this.serverOut = stdout;
    const own = new Promise<ChildExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    // Confined, the process wrap started is the sandbox: the server's own status is the sandbox's report of it.
    this.exited = status === undefined ? own : own.then(async (exit) => exitOfSandbox(exit, await status));
    void this.exited.then((e) => (this.exit = e));
  }

  /** Spawn the server; resolves once it runs, so a bad command is an error before any relaying. */
  static async start(options: ChildOptions): Promise<ChildServer> {
    let child: ChildProcess;
    const launch = options.launch?.(options.command, options.args) ?? { command: options.command, args: options.args };
    try {
      child = spawn(launch.command, [...launch.args], {
        stdio: options.launch === undefined ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", "pipe"],
        // Its own process group: a server behind a shell or npx is a tree, and wrap ends the
        // whole tree, not only the process it started (SPEC §17.7).
        detached: true,
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      });
    } catch (error) {
      // An empty program name, a NUL in an argument: refused before any process exists.
      throw new SpawnError(options.command, messageOf(error));
    }
    try {
      await Promise.race([once(child, "spawn"), once(child, "error").then(([error]: unknown[]) => Promise.reject(error))]);
    } catch (error) {
      const detail = errnoOf(error) === "ENOENT" ? "no such program (is it on PATH?)" : error instanceof Error ? error.message : String(error);
      throw new SpawnError(options.command, detail);
    }
    const statusPipe = child.stdio[3];
    return new ChildServer(child, options.launch === undefined || !isReadable(statusPipe) ? undefined : readStatus(statusPipe));
  }

  /** The child's own exit, once it has exited. */
  get exitStatus(): ChildExit | undefined {
    return this.exit;
  }

  /** The server's stderr, byte for byte, on `stderr`: never parsed, never merged into stdout. */
  teeStderr(stderr: Writable): void {
    const source = this.child.stderr;
    if (source === null) return;
    source.on("data", (chunk: Buffer) => void stderr.write(chunk));
    this.stderrDone = new Promise((resolve) => {
      source.once("end", resolve);
      source.once("error", () => resolve());
    });
  }

  /**
   * Let the server go once the relay has ended: wait for it, bounded by `ms`, asking it to
   * terminate first when `terminate` (it is still wanted no more); then end what is left of
   * its process group and let go of the pipes, so that a process that outlived every signal
   * cannot keep wrap running. Never an unbounded wait.
   */
  async release(ms: number, terminate: boolean): Promise<void> {
    const child = this.child;
    const running = child.exitCode === null && child.signalCode === null;
    if (running && terminate) this.signalGroup("SIGTERM");
    if (running && !(await settlesWithin(this.exited, ms))) {
      this.signalGroup("SIGKILL");
      await settlesWithin(this.exited, 2000);
    }
    // What is left of the tree once the child is gone: asked to end, then made to.
    if (this.signalGroup("SIGTERM")) {
      await pause(Math.min(ms, GROUP_REAP_MS));
      this.signalGroup("SIGKILL");
    }
    await settlesWithin(this.stderrDone, STDERR_DRAIN_MS);
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
  }

  /** Signal the child's process group; false when no process of it is left. */
  private signalGroup(signal: NodeJS.Signals): boolean {
    if (this.child.pid === undefined) return false;
    try {
      process.kill(-this.child.pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** What bubblewrap said of the server on its status fd: whether it started, and its exit code. */
interface SandboxStatus {
  readonly started: boolean;
  readonly exitCode: number | undefined;
}

/** Read the sandbox's status lines (a few hundred bytes: more is not read), until the pipe ends. */
async function readStatus(pipe: Readable): Promise<SandboxStatus> {
  let text = "";
  for await (const chunk of pipe as AsyncIterable<Buffer>) if (text.length < 64 * 1024) text += chunk.toString("utf8");
  let started = false;
  let exitCode: number | undefined;
  for (const line of text.split("\n")) {
    if (/"child-pid"\s*:/.test(line)) started = true;
    const code = /"exit-code"\s*:\s*(\d+)/.exec(line)?.[1];
    if (code !== undefined) exitCode = Number(code);
  }
  return { started, exitCode };
}

/**
 * The server's exit as the sandbox reports it (SPEC §17.11): its code, or, as the sandbox
 * writes a signal's end (128 + n, as a shell does), the signal; no code at all when the
 * sandbox ended before the server ran (what it needed to start was not granted).
 */
function exitOfSandbox(own: ChildExit, status: SandboxStatus): ChildExit {
  if (status.exitCode === undefined) return own.signal !== null ? own : { code: null, signal: null, notStarted: true };
  const n = status.exitCode - 128;
  const signal = n >= 1 && n <= 64 ? (Object.entries(constants.signals).find(([, number]) => number === n)?.[0] as NodeJS.Signals | undefined) : undefined;
  return signal === undefined ? { code: status.exitCode, signal: null } : { code: null, signal };
}

function isReadable(stream: unknown): stream is Readable {
  return typeof stream === "object" && stream !== null && "read" in stream;
}
