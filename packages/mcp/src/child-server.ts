import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { errnoOf, messageOf } from "@aegis/format/internal";
import { pause, settlesWithin } from "./bounded.js";

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
}

/** The server could not be started. Nothing was relayed. */
export class SpawnError extends Error {
  override readonly name = "SpawnError";
  constructor(
    readonly command: string,
    readonly detail: string,
  ) {
    super(`could not start ${command}: ${detail}`);
  }
}

export type ChildExit = { readonly code: number | null; readonly signal: NodeJS.Signals | null };

const STDERR_DRAIN_MS = 2000;
/** After the server's process has exited, what is left of its group gets this long between SIGTERM and SIGKILL. */
const GROUP_REAP_MS = 500;

export class ChildServer {
  readonly serverIn: Writable;
  readonly serverOut: Readable;
  readonly exited: Promise<ChildExit>;
  private exit: ChildExit | undefined;
  private stderrDone: Promise<void> = Promise.resolve();

  private constructor(private readonly child: ChildProcess) {
    const { stdin, stdout } = child;
    if (stdin === null || stdout === null) throw new Error("the child was spawned without pipes");
    this.serverIn = stdin;
    this.serverOut = stdout;
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    void this.exited.then((e) => (this.exit = e));
  }

  /** Spawn the server; resolves once it runs, so a bad command is an error before any relaying. */
  static async start(options: ChildOptions): Promise<ChildServer> {
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
      throw new SpawnError(options.command, messageOf(error));
    }
    try {
      await Promise.race([once(child, "spawn"), once(child, "error").then(([error]: unknown[]) => Promise.reject(error))]);
    } catch (error) {
      const detail = errnoOf(error) === "ENOENT" ? "no such program (is it on PATH?)" : error instanceof Error ? error.message : String(error);
      throw new SpawnError(options.command, detail);
    }
    return new ChildServer(child);
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
