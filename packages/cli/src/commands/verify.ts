import { Command, Option } from "clipanion";
import { ChainReadError } from "@aegis/format";
import { verifyWithCheckpoints, type CheckpointFinding, type GivenCheckpoint } from "@aegis/proof";
import { unreachable } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { readProofInput, statedCheckpoint } from "../proof-files.js";
import { describeIoError as ioErrorText } from "@aegis/format/internal";
import { EnvelopeError, describeDamage, type EnvelopeDamage } from "@aegis/envelope";
import { AegisCommand, StdoutClosed } from "../command.js";
import { exitCodeOfVerdict, type ExitCode } from "../exit-code.js";
import { CliError, renderFault, type CliFault } from "../fault.js";
import { Progress } from "../progress.js";
import { checkKeyArgument, readTrustStore } from "../trust-store.js";
import { verifyJson, verifyJsonParts, verifyTextParts } from "../verify-report.js";
import { checkRecordAgainst, describeTally, type EnvelopeTally } from "../envelope/check-record.js";
import { isLoss, openSource } from "../envelope/source.js";
import { STDIN, rereadableRecord, streamedRecord, type RecordInput } from "../record-input.js";

export class VerifyCommand extends AegisCommand {
  static override paths = [["verify"]];

  static override usage = Command.Usage({
    description: "Check that a record file is whole, unaltered and signed, or say where the first break is",
    details: `
      Walks the record once, streaming, and prints the verdict: \`Verified\`, \`Tampered: <reason>\` or \`Indeterminate: <reason>\`, then one \`key_id\` line per signing key the file publishes, the \`coverage\` a valid signature reached, and the calls in flight when the last Session has no close.

      Without \`--key\` or \`--trust-store\` the verdict is \`Verified (unpinned)\`: the file is internally consistent, but anyone could have signed it. With either, every Session must be signed by one of the given keys, and success reads \`Verified (pinned to <key_id>)\`. A trust store with no keys in it pins to nothing.

      With \`--checkpoint\` (repeatable; SPEC §19.4), the record is also held to checkpoints kept apart from it (\`aegis checkpoint\`): each must be signed by the key of the Session holding its last Line (a trusted one, when pinned) and state the root of the record's first Lines. A record with fewer Lines than a checkpoint covers is \`Tampered\` (\`truncated\`), as is one whose Lines do not have the stated root, and two checkpoints of one origin and size with different roots (the record forked). A checkpoint that covers every Line anchors a last Session with no close: \`Verified\`, its calls in flight still listed. One line per checkpoint says what was found.

      With \`--envelope\`, a last line summarises what the Envelope holds for the digests the record names (\`aegis envelope verify\` lists them one by one); it changes neither the verdict nor the exit code, and an Envelope that cannot be read is reported on stderr without changing them either.

      Exit codes: 0 Verified, 1 Tampered or a usage error, 2 the record or trust store could not be read, 3 Indeterminate.
    `,
    examples: [
      ["Verify a record against the signer's public key", "aegis verify --key 3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c session.aarl"],
      ["Accept any key listed in a trust store", "aegis verify --trust-store trusted-keys.txt session.aarl"],
      ["Internal consistency only, as JSON", "aegis verify --json session.aarl"],
      ["Also check the Envelope holds every request and response", "aegis verify --key 3de537a0...4e2c --envelope session.envelope session.aarl"],
      ["Hold the record to a checkpoint kept elsewhere", "aegis verify --key 3de537a0...4e2c --checkpoint /backup/session.checkpoint session.aarl"],
    ],
  });

  keys = Option.Array("--key", [], { description: "A trusted public key, 64 lowercase hex (repeatable)", arity: 1 });
  trustStore = Option.String("--trust-store", { description: "A file of trusted public keys, one per line" });
  envelope = Option.String("--envelope", { description: "Also check an Envelope store or pack holds the bytes the record names" });
  checkpoints = Option.Array("--checkpoint", [], { description: "A checkpoint the record must agree with (repeatable)", arity: 1 });
  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  record = Option.String({ name: "PATH" });

  protected async run(): Promise<ExitCode> {
    const keys = this.keys.map(checkKeyArgument);
    const pinned = keys.length > 0 || this.trustStore !== undefined;
    const stored = this.trustStore === undefined ? [] : await readTrustStore(this.trustStore);
    const trust = [...keys, ...stored];
    if (this.trustStore !== undefined && trust.length === 0) {
      // Still a pin (the reference's rule): a truncated or mis-mounted store must not read
      // as unpinned. Say so on stderr; stdout stays the reference's.
      this.fail({ code: "empty_trust_store", path: this.trustStore });
    }
    // With --envelope the record is read twice (verify, then its digests).
    const checkpoints: GivenCheckpoint[] = [];
    for (const path of this.checkpoints) {
      const bytes = await readProofInput(path, "checkpoint");
      checkpoints.push({ label: path, bytes, stated: statedCheckpoint(path, bytes) });
    }
    this.given = checkpoints;
    const input = this.envelope === undefined ? await streamedRecord(this.record) : await rereadableRecord(this.record);
    try {
      return await this.verifyInput(input, pinned, trust);
    } finally {
      await input.dispose();
    }
  }

  private async verifyInput(input: RecordInput, pinned: boolean, trust: readonly string[]): Promise<ExitCode> {
    const progress = new Progress(this.context.stderr, "verifying", input.size ?? 0);
    let result;
    let findings: readonly CheckpointFinding[] = [];
    try {
      const options = { ...(pinned ? { trust } : {}), onProgress: (bytes: number) => progress.update(bytes) };
      const source = input.path === STDIN ? { stream: process.stdin, name: input.shown } : input.path;
      ({ verification: result, findings } = await verifyWithCheckpoints(source, this.given, options));
    } catch (error) {
      if (error instanceof ChainReadError) throw new CliError({ code: "unreadable_record", path: input.shown, detail: ioErrorText(error.cause) });
      throw error;
    } finally {
      progress.finish();
    }
    // The Envelope's summary is added to what verify says; it changes neither verdict nor exit
    // code, and neither does an Envelope that cannot be read: that is said on stderr.
    const envelope = this.envelope === undefined ? undefined : await this.checkEnvelope(this.envelope, input);
    if (this.json) {
      const doc = {
        ...verifyJson(result, pinned),
        ...(this.given.length === 0 ? {} : { checkpoints: findings }),
        ...(envelope === undefined ? {} : { envelope: envelope.ok ? { summary: envelope.tally, damage: envelope.damage } : { error: envelope.error } }),
      };
      for (const part of verifyJsonParts(doc, 2)) await this.out(`${part}`);
      await this.out("\n");
    } else {
      for (const part of verifyTextParts(result)) await this.out(part);
      for (const f of findings) await this.out(`${describeFinding(f)}\n`);
      if (envelope?.ok === true) await this.out(`${describeTally(envelope.tally)}\n`);
    }
    return exitCodeOfVerdict(result.verdict);
  }

  private given: readonly GivenCheckpoint[] = [];

  private async checkEnvelope(
    path: string,
    input: RecordInput,
  ): Promise<
    { readonly ok: true; readonly tally: EnvelopeTally; readonly damage: readonly EnvelopeDamage[] } | { readonly ok: false; readonly error: string }
  > {
    let source;
    try {
      source = await openSource(path);
      for (const d of source.damage) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
      const tally = await checkRecordAgainst(input.path, source);
      return { ok: true, tally, damage: source.damage };
    } catch (error) {
      if (error instanceof StdoutClosed) throw error;
      const fault: CliFault =
        error instanceof CliError
          ? error.fault
          : error instanceof EnvelopeError
            ? { code: "envelope", fault: error.fault }
            : { code: "unreadable_record", path: input.shown, detail: ioErrorText(error) };
      const { error: text, help } = renderFault(fault);
      this.context.stderr.write(`error: the Envelope was not checked: ${text}\nhelp: ${help}\n`);
      return { ok: false, error: text };
    } finally {
      await source?.close();
    }
  }
}

/** One line per checkpoint, after the verdict: what was found of it. */
function describeFinding(f: CheckpointFinding): string {
  const what = match(f)
    .with({ code: "matches" }, () => "matches the record's first lines")
    .with({ code: "truncated" }, () => "covers more lines than the record holds that verify")
    .with({ code: "unsigned" }, () => "is not signed by the key of the session holding its last line")
    .with({ code: "mismatch" }, () => "states another root than the record's first lines have")
    .with({ code: "not_reached" }, () => "not checked: the record breaks before")
    .exhaustive(unreachable);
  return `checkpoint ${f.label} (${f.origin}, ${f.size} lines): ${what}`;
}
