import { unreachable } from "@aegis/format/internal";
import { Command, Option } from "clipanion";
import { match } from "ts-pattern";
import { AegisCommand } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError } from "../../fault.js";
import { parseDigestArgument } from "../../envelope/digest-argument.js";
import { envelopeFaults, isLoss, openSource } from "../../envelope/source.js";
import { describeDamage } from "@aegis/envelope";

export class EnvelopeGetCommand extends AegisCommand {
  static override paths = [["envelope", "get"]];

  static override usage = Command.Usage({
    description: "Write the verbatim bytes kept for a digest to stdout",
    details: `
      Looks the digest up in the Envelope, re-hashes what is stored, and writes the bytes to stdout exactly as they were received, only when they hash to the digest. Otherwise it says which it is: missing, redacted (when and why), or digest_mismatch (what the stored bytes hash to).

      Exit codes: 0 the bytes were written, 1 missing, redacted or digest_mismatch (or a usage error, such as a digest that is not 64 lowercase hex), 2 the Envelope could not be read.
    `,
    examples: [
      [
        "The request a call sent",
        "aegis envelope get --envelope session.envelope 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a > request.json",
      ],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory or pack" });
  digest = Option.String({ name: "DIGEST" });

  protected async run(): Promise<ExitCode> {
    const digest = parseDigestArgument(this.digest, "envelope get");
    const source = await openSource(this.envelope);
    try {
      for (const d of source.damage) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
      const read = await envelopeFaults(() => source.get(digest));
      return await match(read)
        .with({ code: "present" }, async (r) => {
          await this.out(r.bytes);
          return 0 as const;
        })
        .with({ code: "missing" }, () =>
          Promise.reject(new CliError({ code: "envelope_entry", digest, answer: "missing", detail: "the Envelope holds no bytes and no tombstone for it" })),
        )
        .with({ code: "redacted" }, (r) =>
          Promise.reject(
            new CliError({ code: "envelope_entry", digest, answer: "redacted", detail: `its bytes were removed at ${r.redactedAt}: ${r.reason}` }),
          ),
        )
        .with({ code: "digest_mismatch" }, (r) =>
          Promise.reject(new CliError({ code: "envelope_entry", digest, answer: "digest_mismatch", detail: `the stored bytes hash to ${r.found}` })),
        )
        // Never the default handler: it would print the entry, bytes and all.
        .exhaustive(unreachable);
    } finally {
      await source.close();
    }
  }
}
