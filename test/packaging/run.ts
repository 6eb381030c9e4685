import { spawn } from "node:child_process";

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Run a command to its end and keep what it printed. Never rejects on a non-zero exit: the
 * tests assert on the code, and print both streams when it is not the expected one.
 */
export function run(command: string, args: readonly string[], options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
  });
}

/** The run as a failure message would want it. */
export function shown(ran: Ran): string {
  return `exit ${String(ran.code)}\n--- stdout\n${ran.stdout}\n--- stderr\n${ran.stderr}`;
}
