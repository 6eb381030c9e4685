import { Command, Option } from "clipanion";
import { EnvelopeError, checkEnvelope, describeDamage, type EnvelopeCheck } from "@aegis/envelope";
import { describeIoError } from "@aegis/format/internal";
import { AegisCommand, StdoutClosed } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError, exitCodeOfFault, renderFault, type CliFault } from "../../fault.js";
import { rereadableRecord, type RecordInput } from "../../record-input.js";
import { checkRecordAgainst, exitCodeOfEnvelopeCheck, isLoss, type EnvelopeTally, type ReferenceCheck } from "@aegis/envelope/internal";
import { checkJson, describeCheck, describeTally } from "../../envelope/check-record.js";
import { envelopeFaults, openSource } from "../../envelope/source.js";
import { StreamedDocument } from "../../json-stream.js";

export class EnvelopeVerifyCommand extends AegisCommand {
  static override paths = [["envelope", "verify"]];

  static override usage = Command.Usage({
    description: "Check that the Envelope holds the bytes of every request and response a record names",
    details: `
      Reads the record row by row and, for every \`request_digest\` and \`response_digest\` it names (each call's request once), asks the Envelope for the bytes and re-hashes them. Prints one line per digest: where the record names it, then \`present\`, \`missing\`, \`digest_mismatch found=<hex>\` or \`redacted at <time>: <reason>\`; then a summary. Damage found in the Envelope's files (a damaged frame, a torn tail) is reported on stderr with its file and byte offset; the entries around it are still read.

      Opening trusts an index that checks, so damage under it shows only when a damaged entry is read. \`--full\` also reads every frame of the Envelope and re-hashes every value, named by the record or not, and reports what that finds: frames whose bytes do not hash to their digest (with file and byte offset), damage, and redactions whose bytes are still on disk; it reads everything, so it takes as long as the Envelope is large.

      This does not verify the record's signatures: run \`aegis verify\` for that (\`aegis verify --envelope\` does both).

      Exit codes: 0 nothing mismatches (missing and redacted entries are reported, not failures), 1 some bytes do not hash to their digest (or a usage error), 2 the record or the Envelope could not be read, or the Envelope is damaged.
    `,
    examples: [
      ["Check a live store", "aegis envelope verify --envelope session.envelope session.aarl"],
      ["Check a pack someone handed over, as JSON", "aegis envelope verify --json --envelope incident.pack session.aarl"],
      ["Also re-hash every value the store holds", "aegis envelope verify --full --envelope session.envelope session.aarl"],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory or pack" });
  full = Option.Boolean("--full", false, { description: "Also read every frame and re-hash every value the Envelope holds" });
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
      const document = new StreamedDocument("digests");
      if (this.json) await this.out(document.start({ schema: "aegis.envelope-verify/1" }));
      const onCheck = async (check: ReferenceCheck): Promise<void> => {
        await this.out(this.json ? document.item(checkJson(check)) : `${describeCheck(check)}\n`);
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
        if (this.json) await this.out(document.end({ error: renderFault(fault).error, exit_code: exitCodeOfFault(fault) }));
        throw new CliError(fault);
      }
      const full = this.full ? await envelopeFaults(() => checkEnvelope(this.envelope)) : undefined;
      const fullLosses = full === undefined ? 0 : full.mismatched.length + full.damage.filter(isLoss).length + full.unscrubbed.length;
      const exit = exitCodeOfEnvelopeCheck({ mismatched: tally.digest_mismatch + (full?.mismatched.length ?? 0), lost: losses.length + fullLosses });
      if (this.json) {
        await this.out(document.end({ summary: tally, damage: source.damage, ...(full === undefined ? {} : { full }), exit_code: exit }));
      } else {
        await this.out(`${describeTally(tally)}\n`);
        if (full !== undefined) await this.out(describeFull(full));
      }
      return exit;
    } finally {
      await source.close();
    }
  }
}

/** What --full found, after the summary: one line each, then its own summary line. */
function describeFull(full: EnvelopeCheck): string {
  const lines = [
    ...full.mismatched.map((m) => `full: ${m.digest} digest_mismatch found=${m.found} at ${m.path} byte ${m.offset}`),
    ...full.damage.map((d) => `full: ${describeDamage(d)}`),
    ...full.unscrubbed.map(
      (u) => `full: ${u.digest} is redacted but its bytes are still at ${u.path} byte ${u.offset}; the next writer to open the store removes them`,
    ),
  ];
  lines.push(
    `full: ${full.entries} entries read, ${full.verified} verified, ${full.mismatched.length} mismatched, ${full.tombstones} tombstones, ${full.damage.length} damage, ${full.unscrubbed.length} unscrubbed`,
  );
  return `${lines.join("\n")}\n`;
}
