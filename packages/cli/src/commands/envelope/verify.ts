import { Command, Option } from "clipanion";
import { EnvelopeError, describeDamage } from "@aegis/envelope";
import { describeIoError } from "@aegis/format";
import { AegisCommand, StdoutClosed } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError, exitCodeOfFault, renderFault, type CliFault } from "../../fault.js";
import { rereadableRecord, type RecordInput } from "../../record-input.js";
import { checkJson, checkRecordAgainst, describeCheck, describeTally, type EnvelopeTally, type ReferenceCheck } from "../../envelope/check-record.js";
import { isLoss, openSource } from "../../envelope/source.js";

export class EnvelopeVerifyCommand extends AegisCommand {
  static override paths = [["envelope", "verify"]];

  static override usage = Command.Usage({
    description: "Check that the Envelope holds the bytes of every request and response a record names",
    details: `
      Reads the record row by row and, for every \`request_digest\` and \`response_digest\` it names (each call's request once), asks the Envelope for the bytes and re-hashes them. Prints one line per digest: where the record names it, then \`present\`, \`missing\`, \`digest_mismatch found=<hex>\` or \`redacted at <time>: <reason>\`; then a summary. Damage found in the Envelope's files (a damaged frame, a torn tail) is reported on stderr with its file and byte offset; the entries around it are still read.

      This does not verify the record's signatures: run \`aegis verify\` for that (\`aegis verify --envelope\` does both).

      Exit codes: 0 nothing mismatches (missing and redacted entries are reported, not failures), 1 some bytes do not hash to their digest (or a usage error), 2 the record or the Envelope could not be read, or the Envelope is damaged.
    `,
    examples: [
      ["Check a live store", "aegis envelope verify --envelope session.envelope session.aarl"],
      ["Check a pack someone handed over, as JSON", "aegis envelope verify --json --envelope incident.pack session.aarl"],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory or pack" });
  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  record = Option.String({ name: "PATH" });

  protected async run(): Promise<ExitCode> {
    const input = await rereadableRecord(this.record);
    try {
      return await this.check(input);
    } finally {
      await input.dispose();
    }
  }

  private async check(input: RecordInput): Promise<ExitCode> {
    const source = await openSource(this.envelope);
    try {
      const losses = source.damage.filter(isLoss);
      for (const d of source.damage) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
      if (losses.length > 0)
        this.context.stderr.write("help: the entries around the damage were read; `aegis envelope pack` can copy the whole ones to a new pack\n");
      // Streamed, in text and JSON alike: memory does not grow with the record.
      if (this.json) await this.out(`{\n  "schema": "aegis.envelope-verify/1",\n  "digests": [`);
      let first = true;
      const onCheck = async (check: ReferenceCheck): Promise<void> => {
        if (this.json) await this.out(`${first ? "" : ","}\n    ${JSON.stringify(checkJson(check))}`);
        else await this.out(`${describeCheck(check)}\n`);
        first = false;
      };
      let tally: EnvelopeTally;
      try {
        tally = await checkRecordAgainst(input.path, source, onCheck);
      } catch (error) {
        if (error instanceof CliError || error instanceof StdoutClosed) throw error;
        const fault: CliFault =
          error instanceof EnvelopeError
            ? { code: "envelope", fault: error.fault }
            : { code: "unreadable_record", path: input.shown, detail: describeIoError(error) };
        if (this.json) await this.out(`\n  ],\n  "error": ${JSON.stringify(renderFault(fault).error)},\n  "exit_code": ${exitCodeOfFault(fault)}\n}\n`);
        throw new CliError(fault);
      }
      const exit: ExitCode = tally.digest_mismatch > 0 ? 1 : losses.length > 0 ? 2 : 0;
      if (this.json) {
        await this.out(
          `${first ? "" : "\n  "}],\n  "summary": ${JSON.stringify(tally)},\n  "damage": ${JSON.stringify(source.damage)},\n  "exit_code": ${exit}\n}\n`,
        );
      } else {
        await this.out(`${describeTally(tally)}\n`);
      }
      return exit;
    } finally {
      await source.close();
    }
  }
}
