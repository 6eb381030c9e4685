import { unmatched } from "@aegis/format/internal";
import { Command, Option } from "clipanion";
import { match } from "ts-pattern";
import { AegisCommand } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError } from "../../fault.js";
import { parseDigestArgument } from "../../envelope/digest-argument.js";
import { envelopeFaults, openStore } from "../../envelope/source.js";

export class EnvelopeRedactCommand extends AegisCommand {
  static override paths = [["envelope", "redact"]];

  static override usage = Command.Usage({
    description: "Remove the bytes kept for a digest, keeping a tombstone that says when and why",
    details: `
      Writes a tombstone (the time and your reason) durably, then overwrites the stored bytes with zeros and syncs them: the secret is gone from the store's files, and later reads answer \`redacted\`. The record is untouched and still verifies: it holds only the digest. Bytes once redacted are never kept again, even if a later call sends them.

      Only a store directory can be redacted (a pack is a copy: make a new one). The store must not be open by a writer.

      Exit codes: 0 redacted (or already redacted), 1 the store holds nothing for the digest, the reason was refused, or a usage error, 2 the store could not be opened or written.
    `,
    examples: [
      [
        "Remove a leaked token",
        "aegis envelope redact --envelope session.envelope --reason 'API token in arguments, ticket SEC-142' 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
      ],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory" });
  reason = Option.String("--reason", { required: true, description: "Why the bytes are removed (kept in the tombstone)" });
  digest = Option.String({ name: "DIGEST" });

  protected async run(): Promise<ExitCode> {
    const digest = parseDigestArgument(this.digest, "envelope redact");
    const store = await openStore(this.envelope);
    try {
      const outcome = await envelopeFaults(() => store.redact(digest, this.reason));
      return await match(outcome)
        .with({ code: "redacted" }, async (o) => {
          await this.out(`redacted ${digest} at ${o.redactedAt}: removed ${o.removedBytes} bytes\n`);
          return 0 as const;
        })
        .with({ code: "already_redacted" }, async (o) => {
          await this.out(`${digest} was already redacted at ${o.redactedAt}: ${o.reason}\n`);
          return 0 as const;
        })
        .with({ code: "missing" }, () =>
          Promise.reject(
            new CliError({ code: "envelope_entry", digest, answer: "missing", detail: "the store holds no bytes for it, so there is nothing to redact" }),
          ),
        )
        .with({ code: "reason_refused" }, (o) =>
          Promise.reject(new CliError({ code: "usage", message: `--reason was refused: ${o.detail}`, command: "envelope redact" })),
        )
        .exhaustive(unmatched);
    } finally {
      await store.close();
    }
  }
}
