import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { BIN, KEY, MIRROR, tempDir } from "./support.js";
import { writeKeyFile } from "@aegis/format/internal";

/**
 * `aegis wrap` as a real process, driven the way an MCP client drives it: frames written to
 * its stdin, frames read from its stdout.
 */
export class WrapProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  private parts: Buffer[] = [];
  private readonly frames: Buffer[] = [];
  private waiters: (() => void)[] = [];
  private stderrChunks: Buffer[] = [];
  /** Every byte wrap wrote to stdout, in order. */
  readonly stdout: Buffer[] = [];

  constructor(args: readonly string[], options: { env?: NodeJS.ProcessEnv; shell?: string } = {}) {
    const argv = [BIN, ...args];
    this.child =
      options.shell === undefined
        ? spawn(process.execPath, argv, { stdio: "pipe", env: { ...process.env, AEGIS_DEBUG: "", ...options.env } })
        : spawn("/bin/sh", ["-c", `${options.shell}; exec "$0" "$@"`, process.execPath, ...argv], {
            stdio: "pipe",
            env: { ...process.env, AEGIS_DEBUG: "", ...options.env },
          });
    this.exit = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.stdout.push(chunk);
      let start = 0;
      let newline;
      while ((newline = chunk.indexOf(0x0a, start)) !== -1) {
        this.parts.push(chunk.subarray(start, newline));
        this.frames.push(Buffer.concat(this.parts));
        this.parts = [];
        start = newline + 1;
      }
      if (start < chunk.length) this.parts.push(chunk.subarray(start));
      this.wake();
    });
    this.child.stdout.on("end", () => this.wake());
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.stderrChunks.push(chunk);
      this.wake();
    });
    this.child.stdin.on("error", () => undefined);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  send(bytes: Buffer | string, newline = true): void {
    this.child.stdin.write(bytes);
    if (newline) this.child.stdin.write("\n");
  }

  /** The next frame wrap relayed to the client. */
  async next(timeoutMs = 30_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.frames.shift();
      if (frame !== undefined) return frame;
      if (this.child.stdout.readableEnded) throw new Error(`wrap's stdout ended; stderr: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no frame within ${timeoutMs} ms; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  async nextJson(timeoutMs?: number): Promise<Record<string, unknown>> {
    return JSON.parse((await this.next(timeoutMs)).toString("utf8")) as Record<string, unknown>;
  }

  /** Wait until stderr holds `text`. */
  async stderrHas(text: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stderr.includes(text)) {
      if (Date.now() > deadline) throw new Error(`stderr never said ${JSON.stringify(text)}; it said: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  get stderr(): string {
    return Buffer.concat(this.stderrChunks).toString("utf8");
  }

  get stderrBytes(): Buffer {
    return Buffer.concat(this.stderrChunks);
  }

  end(): void {
    this.child.stdin.end();
  }

  async finished(): Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }> {
    const exit = await this.exit;
    // Let the last stderr bytes in.
    await new Promise((resolve) => setImmediate(resolve));
    return exit;
  }
}

export interface Recorded {
  readonly dir: string;
  readonly audit: string;
  readonly key: string;
}

/** A fresh directory with a signing key in it. */
export async function workspace(): Promise<Recorded> {
  const dir = tempDir();
  const key = join(dir, "signing.key");
  await writeKeyFile(key, KEY);
  return { dir, audit: join(dir, "record.aarl"), key };
}

/** `aegis wrap` over the mirror server. */
export function wrapMirror(w: Recorded, extra: readonly string[] = [], options: { env?: NodeJS.ProcessEnv; shell?: string } = {}): WrapProcess {
  return new WrapProcess(["wrap", "--audit", w.audit, "--signing-key", w.key, ...extra, "--", process.execPath, MIRROR], options);
}
