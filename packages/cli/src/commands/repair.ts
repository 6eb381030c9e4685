import { Command, Option } from "clipanion";
import { RecordWriterError, repairTornTail, type RepairResult } from "@aegis/format";
import { match } from "ts-pattern";
import { unmatched } from "@aegis/format/internal";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { rereadableRecord } from "../record-input.js";

export class RepairCommand extends AegisCommand {
  static override paths = [["repair"]];

  static override usage = Command.Usage({
    description: "Move a torn last line out of a record, so that a writer can append to it again",
    details: `
      A writer killed in the middle of a line leaves a torn last row; a writer then refuses to append to the file (\`torn final line\`). \`repair\` copies the torn bytes to \`<PATH>.torn-<offset>\`, syncs the copy, and only then cuts them from the record, so nothing is lost. A file whose last line is whole is left as it is.

      Torn means what \`aegis verify\` calls torn: a last row that does not parse. A last row that parses but has no canonical form (a float, a null, a negative number) was written whole, and \`aegis verify\` calls it Tampered; \`repair\` refuses to cut it, and says so with the verifier's verdict (SPEC §13.2).

      Until a new Session is appended, \`aegis verify\` reports the Session that was cut short as an unanchored tail, with the calls that were in flight: the honest answer. The next writer's Session chains to the last whole Line (SPEC §13.2). A lock left by a killed writer is recovered when its process is gone.

      Exit codes: 0 repaired, or nothing to repair; 1 the last line is one \`aegis verify\` calls Tampered, left as it is; 2 the file could not be read or written, or another writer holds it.
    `,
    examples: [
      ["After a crash, before the next aegis wrap", "aegis repair session.aarl"],
      ["As JSON", "aegis repair --json session.aarl"],
    ],
  });

  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  record = Option.String({ name: "PATH" });

  protected async run(): Promise<ExitCode> {
    // Only checked as a record path: repair writes the file, so - is no record here.
    if (this.record === "-") throw new CliError({ code: "usage", message: "repair changes a record file in place: give its path, not -", command: "repair" });
    await (await rereadableRecord(this.record)).dispose();
    let result: RepairResult;
    try {
      result = await repairTornTail(this.record);
    } catch (error) {
      if (error instanceof RecordWriterError) throw new CliError({ code: "writer", fault: error.fault });
      throw error;
    }
    if (this.json) {
      await this.out(`${JSON.stringify({ schema: "aegis.repair/1", path: this.record, ...result }, null, 2)}\n`);
      return 0;
    }
    await this.out(
      match(result)
        .with({ repaired: true }, (r) => `repaired ${this.record}: moved the torn last ${r.bytes} bytes, from byte ${r.offset}, to ${r.sidePath}\n`)
        .with(
          { repaired: false },
          (r) =>
            `nothing to repair: ${this.record} ${r.tail === "empty" ? "is empty" : r.tail === "line" ? "ends in a whole line" : "ends in a line longer than a writer reads; it is not torn, and is left as it is"}\n`,
        )
        .exhaustive(unmatched),
    );
    return 0;
  }
}
