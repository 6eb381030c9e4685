import { Command, Option } from "clipanion";
import { AegisCommand } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError } from "../../fault.js";
import { envelopeFaults, openSource, openStore } from "../../envelope/source.js";
import { expire } from "@aegis/envelope/internal";

export class EnvelopeExpireCommand extends AegisCommand {
  static override paths = [["envelope", "expire"]];

  static override usage = Command.Usage({
    description: "Remove the bytes no call after a date needs, keeping a tombstone with the reason retention",
    details: `
      Records are kept for years; the bytes behind them often may not be. Reads every \`--record\` (each must verify: a record that does not is refused, and nothing is expired) and, for each digest their calls name (requests, responses, tool definitions), the latest \`time\` of a Line naming it. Every entry whose latest naming Line is older than \`--before\` is redacted with the reason \`retention\`, as \`aegis envelope redact\` does: a durable tombstone, then the bytes overwritten with zeros and synced. An entry also named by a call on or after the date stays, and so does one named by a Line with no time (its age is unknown) and one no given record names: give every record whose calls the store holds. Prints each entry once it is gone, then a summary.

      Killed part-way, what it printed is done and the store stays consistent: the next writer to open the store finishes an interrupted overwrite, and running the command again expires the rest. The records still verify, and \`aegis recheck\` reports a call whose request expired as \`missing_envelope\`, with the tombstone's time and reason \`retention\`.

      \`--dry-run\` prints what would go, from the store opened read-only, and changes nothing. Only a store directory can be expired (a pack is a copy: make a new one), and no writer may hold it.

      Exit codes: 0 done (also when nothing was old enough), 1 a usage error, or a record that does not verify, 2 a record or the store could not be read or written.
    `,
    examples: [
      ["What seven years of retention would remove", "aegis envelope expire --dry-run --envelope session.envelope --before 2019-01-01 --record session.aarl"],
      [
        "Expire a store shared by two records",
        "aegis envelope expire --envelope shared.envelope --before 2019-01-01T00:00:00Z --record a.aarl --record b.aarl",
      ],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory" });
  before = Option.String("--before", { required: true, description: "Expire entries last named before this UTC date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)" });
  records = Option.Array("--record", [], { description: "A record whose calls name the store's entries (repeatable; at least one)", arity: 1 });
  dryRun = Option.Boolean("--dry-run", false, { description: "Say what would go, and change nothing" });

  protected async run(): Promise<ExitCode> {
    if (this.records.length === 0)
      throw new CliError({
        code: "usage",
        message: "envelope expire requires --record: the records whose calls decide which bytes are still needed",
        command: "envelope expire",
      });
    const verb = this.dryRun ? "would expire" : "expired";
    const done = await envelopeFaults(() =>
      expire(
        this.records,
        this.before,
        this.dryRun ? { code: "dry_run", open: () => openSource(this.envelope) } : { code: "redact", open: () => openStore(this.envelope) },
        (e) => this.out(`${verb} ${e.digest} (${e.size} bytes, last named ${e.latest})\n`),
      ),
    );
    if (!done.ok) {
      const refusal = done.refusal;
      if (refusal.code === "bad_before") throw new CliError({ code: "usage", message: `--before: ${refusal.detail}`, command: "envelope expire" });
      throw new CliError(refusal);
    }
    const { tally: t, plan } = done;
    await this.out(
      `${verb} ${t.expired} ${t.expired === 1 ? "entry" : "entries"} (${t.removedBytes} bytes) named only before ${done.cutoff}; ` +
        `kept ${plan.keptLater} named on or after it and ${plan.keptUndated} named by a Line with no time; ` +
        `${t.alreadyRedacted} already redacted, ${t.notHeld} not in the store\n`,
    );
    return 0;
  }
}
