import { unmatched, messageOf } from "@aegis/format/internal";
import { Command, Option } from "clipanion";
import { match } from "ts-pattern";
import { AegisCommand } from "../../command.js";
import type { ExitCode } from "../../exit-code.js";
import { CliError } from "../../fault.js";
import { parseDigestArgument } from "../../envelope/digest-argument.js";
import { envelopeFaults, openSource } from "../../envelope/source.js";
import { describeDamage, type EnvelopeSource } from "@aegis/envelope";
import { MAX_REASON_BYTES, describeEnvelopeFault, isLoss } from "@aegis/envelope/internal";
import { beginAccess, type AccessCall } from "../../envelope/access-record.js";
import { readSigningKey } from "../../signing-key.js";

export class EnvelopeGetCommand extends AegisCommand {
  static override paths = [["envelope", "get"]];

  static override usage = Command.Usage({
    description: "Write the verbatim bytes kept for a digest to stdout",
    details: `
      Looks the digest up in the Envelope, re-hashes what is stored, and writes the bytes to stdout exactly as they were received, only when they hash to the digest. Otherwise it says which it is: missing, redacted (when and why), or digest_mismatch (what the stored bytes hash to).

      With \`--audit <RECORD> --signing-key <KEY> --reason <TEXT>\`, the read is itself on the record first: a Session is appended to the access record \`<RECORD>\` (a record like any other, signed with \`<KEY>\`; \`aegis verify\` checks it) holding one call of the tool \`aegis.envelope.get\`, whose \`envelope_access\` names the digest, the reason, the OS user and the key id of the reader. Its intent is durable before the Envelope is opened, and its outcome (served, or missing, redacted, digest_mismatch, unreadable) is durable before a byte is written to stdout. Without the signing key nothing is read. This is accountability for readers who use aegis, not access control: file modes are that (SPEC §14.11).

      Exit codes: 0 the bytes were written, 1 missing, redacted or digest_mismatch (or a usage error, such as a digest that is not 64 lowercase hex), 2 the Envelope (or the access record, or its signing key) could not be read or written.
    `,
    examples: [
      [
        "The request a call sent",
        "aegis envelope get --envelope session.envelope 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a > request.json",
      ],
      [
        "The same, the read on the record first",
        "aegis envelope get --envelope session.envelope --audit access.aarl --signing-key reader.key --reason 'INC-2231: what did the agent send?' 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a > request.json",
      ],
    ],
  });

  envelope = Option.String("--envelope", { required: true, description: "An Envelope store directory or pack" });
  audit = Option.String("--audit", { description: "Record the read in this access record first (needs --signing-key and --reason)" });
  signingKey = Option.String("--signing-key", { description: "The key file that signs the access record" });
  reason = Option.String("--reason", { description: "Why the bytes are read (kept in the access record)" });
  digest = Option.String({ name: "DIGEST" });

  protected async run(): Promise<ExitCode> {
    const digest = parseDigestArgument(this.digest, "envelope get");
    const access = await this.beginAccess(digest);
    let source: EnvelopeSource;
    try {
      source = await openSource(this.envelope);
    } catch (error) {
      await access?.end({
        code: "failed",
        detail: error instanceof CliError && error.fault.code === "envelope" ? describeEnvelopeFault(error.fault.fault) : messageOf(error),
      });
      throw error;
    }
    try {
      for (const d of source.damage) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
      let read;
      try {
        read = await envelopeFaults(() => source.get(digest));
      } catch (error) {
        await access?.end({
          code: "failed",
          detail: error instanceof CliError && error.fault.code === "envelope" ? describeEnvelopeFault(error.fault.fault) : messageOf(error),
        });
        throw error;
      }
      // SPEC §14.11: the outcome is durable before a byte leaves.
      await access?.end({ code: "answered", read });
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
        .exhaustive(unmatched);
    } finally {
      await source.close();
    }
  }

  /** With `--audit`: the key is read and the read's intent made durable before the Envelope is opened. */
  private async beginAccess(digest: string): Promise<AccessCall | undefined> {
    const given = [this.audit, this.signingKey, this.reason].filter((x) => x !== undefined).length;
    if (given === 0) return undefined;
    if (this.audit === undefined || this.signingKey === undefined || this.reason === undefined)
      throw new CliError({
        code: "usage",
        message: "--audit, --signing-key and --reason go together: the access record, the key that signs it, and why the bytes are read",
        command: "envelope get",
      });
    if (this.reason.trim() === "") throw new CliError({ code: "usage", message: "--reason is empty: say why the bytes are read", command: "envelope get" });
    // As a tombstone's reason (SPEC §14.3): a reason, not a document.
    if (Buffer.byteLength(this.reason, "utf8") > MAX_REASON_BYTES)
      throw new CliError({ code: "usage", message: `--reason is over ${MAX_REASON_BYTES} bytes of UTF-8`, command: "envelope get" });
    const key = await readSigningKey(this.signingKey);
    return beginAccess({ audit: this.audit, key, digest, reason: this.reason, envelope: this.envelope });
  }
}
