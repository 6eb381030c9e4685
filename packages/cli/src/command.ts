import { errnoOf, messageOf } from "@aegis/format/internal";
import { once } from "node:events";
import { Command } from "clipanion";
import { CliError, exitCodeOfFault, renderFault, type CliFault } from "./fault.js";
import type { ExitCode } from "./exit-code.js";
import { FaultError } from "@aegis/format";

/**
 * Every aegis command. `execute` never throws: a fault becomes `error:` and `help:` on
 * stderr and its exit code; anything unexpected is reported as an internal error, still
 * without a stack trace (set AEGIS_DEBUG=1 to see one).
 */
export abstract class AegisCommand extends Command {
  protected abstract run(): Promise<ExitCode>;

  /** `--quiet`, where a command has it: nothing on stdout, the exit code alone. */
  protected get quietStdout(): boolean {
    return false;
  }

  async execute(): Promise<ExitCode> {
    try {
      return await this.run();
    } catch (error) {
      if (error instanceof StdoutClosed) return 0;
      const fault: CliFault = error instanceof CliError ? error.fault : { code: "internal", detail: messageOf(error) };
      if (!(error instanceof CliError) && process.env["AEGIS_DEBUG"] === "1")
        this.context.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
      return this.fail(fault);
    }
  }

  protected fail(fault: CliFault): ExitCode {
    const { error, help } = renderFault(fault);
    this.context.stderr.write(`error: ${error}\nhelp: ${help}\n`);
    return exitCodeOfFault(fault);
  }

  /**
   * Write to stdout, waiting when the reader is slower than we are. A reader that went
   * away (`aegis show big.aarl | head`) ends the output quietly: see {@link StdoutClosed}.
   */
  protected async out(text: string | Uint8Array): Promise<void> {
    if (this.quietStdout) return;
    const stdout = this.context.stdout;
    if (stdoutClosed(stdout)) throw new StdoutClosed();
    try {
      if (!stdout.write(text)) {
        // The listener that loses the race is removed, or each wait would leave two behind.
        const done = new AbortController();
        try {
          await Promise.race([once(stdout, "drain", { signal: done.signal }), once(stdout, "close", { signal: done.signal })]);
        } finally {
          done.abort();
        }
      }
    } catch (error) {
      if (isEpipe(error)) throw new StdoutClosed();
      throw error;
    }
  }
}

/** The reader of stdout went away (EPIPE): nothing more can be said, and nothing is wrong. */
export class StdoutClosed extends FaultError<{ readonly code: "stdout_closed" }> {
  constructor() {
    super("StdoutClosed", { code: "stdout_closed" }, () => "the reader of standard output went away");
  }
}

const closed = new WeakSet<object>();

/** Note EPIPE on a stream instead of letting Node report it as an unhandled error. */
export function watchForClosedReader(stream: NodeJS.WritableStream): void {
  stream.on("error", (error: unknown) => {
    if (isEpipe(error)) closed.add(stream);
    else throw error;
  });
}

function stdoutClosed(stream: object): boolean {
  return closed.has(stream);
}

function isEpipe(error: unknown): boolean {
  return errnoOf(error) === "EPIPE";
}
