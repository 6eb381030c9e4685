import { Command, Option } from "clipanion";
import { writePack } from "@aegis/envelope";
import { digestReferences } from "@aegis/envelope/internal";
import { describeIoError } from "@aegis/format/internal";
import { AegisCommand } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError } from "../../fault.js";
import { rereadableRecord } from "../../record-input.js";
import { envelopeFaults, openSource } from "../../envelope/source.js";

export class EnvelopePackCommand extends AegisCommand {
  static override paths = [["envelope", "pack"]];

  static override usage = Command.Usage({
    description: "Copy the entries a record references into one file to hand to someone else",
    details: `
      Collects every request and response digest the record names (only those of the calls given with \`--call\`, when any is) and writes their bytes, and the tombstones of redacted ones, into a new pack file. Each entry's bytes are re-hashed as they are copied; bytes that do not hash to their digest are left out and reported. The recipient reads the pack with \`aegis envelope verify\`, \`get\` and \`recheck --envelope\`.

      An existing file is never replaced.

      Exit codes: 0 the pack was written, 1 some bytes did not hash to their digest and were left out, an unknown \`--call\`, an \`--out\` that already exists, or a usage error, 2 the record or the store could not be read, or the pack could not be written.
    `,
    examples: [
      ["Everything the record references", "aegis envelope pack --envelope session.envelope --out incident.pack session.aarl"],
      ["Only two calls", "aegis envelope pack --envelope session.envelope --out call-3.pack --call call-3 --call call-4 session.aarl"],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory (or pack)" });
  out_ = Option.String("--out", { required: true, description: "The pack file to write (must not exist)" });
  calls = Option.Array("--call", [], { description: "Only this call's entries (repeatable)", arity: 1 });
  record = Option.String({ name: "PATH" });

  protected async run(): Promise<ExitCode> {
    const wanted = new Set(this.calls);
    const seen = new Set<string>();
    const digests = new Set<string>();
    const input = await rereadableRecord(this.record);
    try {
      for await (const reference of digestReferences(input.path)) {
        if (wanted.size > 0 && (reference.callId === undefined || !wanted.has(reference.callId))) continue;
        if (reference.callId !== undefined) seen.add(reference.callId);
        digests.add(reference.digest);
      }
    } catch (error) {
      throw new CliError({ code: "unreadable_record", path: input.shown, detail: describeIoError(error) });
    } finally {
      await input.dispose();
    }
    const unknown = [...wanted].find((call) => !seen.has(call));
    if (unknown !== undefined) throw new CliError({ code: "no_such_call", callId: unknown });

    const source = await openSource(this.envelope);
    try {
      const report = await envelopeFaults(() => writePack(source, digests, this.out_)).catch((error: unknown) => {
        // The pack's own path cannot be written: say so of --out, not of the Envelope.
        if (error instanceof CliError && error.fault.code === "envelope" && error.fault.fault.code === "io" && error.fault.fault.path === this.out_)
          throw new CliError({ code: "output_dir", path: this.out_, detail: error.fault.fault.detail });
        throw error;
      });
      await this.out(`packed ${report.entries} entries and ${report.tombstones} tombstones (${report.bytes} bytes) into ${this.out_}\n`);
      for (const digest of report.missing) this.context.stderr.write(`note: ${digest} is not in the store: left out\n`);
      for (const m of report.mismatched) this.context.stderr.write(`error: ${m.digest}: the stored bytes hash to ${m.found}: left out\n`);
      return report.mismatched.length > 0 ? 1 : 0;
    } finally {
      await source.close();
    }
  }
}
