import { Command } from "clipanion";
import { CliError, exitCodeOfFault, renderFault, type CliFault } from "./fault.js";
import type { ExitCode } from "./exit-code.js";

/**
 * Every aegis command. `execute` never throws: a fault becomes `error:` and `help:` on
 * stderr and its exit code; anything unexpected is reported as an internal error, still
 * without a stack trace (set AEGIS_DEBUG=1 to see one).
 */
export abstract class AegisCommand extends Command {
  protected abstract run(): Promise<ExitCode>;

  async execute(): Promise<ExitCode> {
    try {
      return await this.run();
    } catch (error) {
      const fault: CliFault = error instanceof CliError ? error.fault : { code: "internal", detail: error instanceof Error ? error.message : String(error) };
      if (!(error instanceof CliError) && process.env["AEGIS_DEBUG"] === "1") this.context.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
      return this.fail(fault);
    }
  }

  protected fail(fault: CliFault): ExitCode {
    const { error, help } = renderFault(fault);
    this.context.stderr.write(`error: ${error}\nhelp: ${help}\n`);
    return exitCodeOfFault(fault);
  }

  protected out(text: string): void {
    this.context.stdout.write(text);
  }
}
