import { basename } from "node:path";
import { describeVerdict } from "@aegis/format";
import { describeIoError, replaceFileFromParts } from "@aegis/format/internal";
import { describeDamage } from "@aegis/envelope";
import { isLoss } from "@aegis/envelope/internal";
import type { GivenCheckpoint } from "@aegis/proof";
import { Command, Option } from "clipanion";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { openSource } from "../envelope/source.js";
import { readPolicy } from "../policy-file.js";
import { readProofInput, statedCheckpoint } from "../proof-files.js";
import { rereadableRecord, type RecordInput } from "../record-input.js";
import { checkpointData, envelopeData, verifyAndRecheck } from "../report/collect.js";
import type { ReportData } from "../report/data.js";
import { reportPage } from "../report/html.js";
import { readPageAssets, type PageAssets } from "../report/page-assets.js";
import { checkKeyArgument, readTrustStore } from "../trust-store.js";
import { VERSION } from "../version.js";
import { describeUnfinishedCalls } from "../verify-report.js";

/**
 * The largest record a page carries. Its base64 is a third larger, and the browser holds
 * the page's text, the bytes and the account at once: past this a tab runs out of room.
 */
export const MAX_REPORT_RECORD_BYTES = 256 * 1024 * 1024;

export class ReportCommand extends AegisCommand {
  static override paths = [["report"]];

  static override usage = Command.Usage({
    description: "Write one HTML file that verifies a record in the browser and shows what happened",
    details: `
      Writes a self-contained page (no network, no other file; it opens from disk) that carries the record's bytes and the verifier of this version of aegis, bundled. When opened, the page verifies the record again, in the browser, and shows the verdict as \`aegis verify\` gives it (Verified, pinned or not, Tampered or Indeterminate, with the reason and a link to the Line it names), the keys and Sessions, and every call in file order: its time, tool, capability, the decision and the rule that made it, outcome, duration, approvals and who answered them, and calls still in flight. Rows can be filtered (denied, parked, errors, one tool, one Session, the calls that touched a path or a host, read as \`aegis show --path\` and \`--host\` read them) and searched by call id; the table is navigable with the keyboard and prints as a list.

      With \`--key\` (or \`--trust-store\`) the page's verdict is pinned to those keys. With \`--policy\`, each call also shows what \`aegis recheck\` says of it under that Policy Set; with \`--envelope\`, whether the Envelope holds its request and response bytes (present, redacted, missing, altered), and the present bytes on demand, hashed again in the browser. With \`--checkpoint\` (repeatable), what holding the record to each checkpoint found. These three are computed here, when the page is written, and the page says so; the verdict is always the browser's own.

      \`--blank\` writes the same page with no record in it: open it, choose or drop a \`.aarl\` file (and enter public keys if you have them), and the record is verified in the browser, with nothing installed and nothing uploaded.

      The record's verdict, as this process found it, is printed on stderr, with the calls its ended Sessions left without an outcome, if any (as \`aegis verify\` says them). Exit code 0 when the page was written, whatever the verdict (\`aegis verify\` is the gate); 1 for a usage error; 2 when the record, policy, Envelope, checkpoint or output could not be read or written, or the record is over 256 MiB.
    `,
    examples: [
      ["A page for a record, pinned to its signer's key", "aegis report --key 3de537a0...4e2c --out session.html session.aarl"],
      [
        "With the recheck under a policy, and the Envelope's bytes",
        "aegis report --policy policy.yaml --envelope session.envelope --out session.html session.aarl",
      ],
      ["A page anyone can drop a record on", "aegis report --blank --out verify.html"],
    ],
  });

  keys = Option.Array("--key", [], { description: "A trusted public key, 64 lowercase hex (repeatable)", arity: 1 });
  trustStore = Option.String("--trust-store", { description: "A file of trusted public keys, one per line" });
  envelope = Option.String("--envelope", { description: "An Envelope store or pack: each call's request and response bytes" });
  policy = Option.String("--policy", { description: "A Policy Set to recheck every call under" });
  checkpoints = Option.Array("--checkpoint", [], { description: "A checkpoint to hold the record to (repeatable)", arity: 1 });
  blank = Option.Boolean("--blank", false, { description: "Write the page with no record: a record is dropped on it in the browser" });
  outFile = Option.String("--out", { description: "The HTML file to write (replaced if it exists)" });
  record = Option.String({ name: "RECORD", required: false });

  protected async run(): Promise<ExitCode> {
    const out = this.outFile;
    if (out === undefined) throw usage("report needs --out <FILE.html>: the page to write");
    if (this.blank && this.record !== undefined) throw usage("--blank writes a page with no record: give no record with it");
    if (this.blank && (this.envelope !== undefined || this.policy !== undefined || this.checkpoints.length > 0))
      throw usage("--envelope, --policy and --checkpoint need a record: the blank page verifies one dropped on it, alone");
    if (!this.blank && this.record === undefined) throw usage("report needs a record (or --blank, for a page to drop one on)");
    const keys = [...this.keys.map(checkKeyArgument), ...(this.trustStore === undefined ? [] : await readTrustStore(this.trustStore))];
    if (this.trustStore !== undefined && keys.length === 0) throw new CliError({ code: "empty_trust_store", path: this.trustStore });
    const assets = await pageAssets();
    const written_at = new Date().toISOString();
    if (this.record === undefined) {
      const data: ReportData = {
        schema: "aegis.report/1",
        version: VERSION,
        written_at,
        record_name: null,
        keys,
        recheck: null,
        envelope: null,
        checkpoints: null,
      };
      await this.write(out, assets, data, undefined);
      await this.out(`wrote ${out}: open it in a browser and drop a record on it; nothing is uploaded\n`);
      return 0;
    }
    const input = await rereadableRecord(this.record);
    try {
      return await this.report(input, out, assets, keys, written_at);
    } finally {
      await input.dispose();
    }
  }

  private async report(input: RecordInput, out: string, assets: PageAssets, keys: readonly string[], written_at: string): Promise<ExitCode> {
    const size = input.size ?? 0;
    if (size > MAX_REPORT_RECORD_BYTES) throw new CliError({ code: "record_too_large", path: input.shown, size, limit: MAX_REPORT_RECORD_BYTES });
    const policy = this.policy === undefined ? undefined : { set: await readPolicy(this.policy), name: basename(this.policy) };
    const given: GivenCheckpoint[] = [];
    for (const path of this.checkpoints) {
      const bytes = await readProofInput(path, "checkpoint");
      given.push({ label: basename(path), bytes, stated: statedCheckpoint(path, bytes) });
    }
    const source = this.envelope === undefined ? undefined : await openSource(this.envelope);
    try {
      const damage = (source?.damage ?? []).map((d) => {
        this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
        return describeDamage(d);
      });
      const { verification, recheck } = await verifyAndRecheck(input.path, input.shown, keys, policy, source);
      this.context.stderr.write(`record: ${describeVerdict(verification)}\n`);
      // SPEC §13.4: what verify says beside its verdict, the page says in its banner.
      const unfinished = describeUnfinishedCalls(verification.unfinished_calls);
      if (unfinished !== undefined) this.context.stderr.write(`record: ${unfinished}\n`);
      const data: ReportData = {
        schema: "aegis.report/1",
        version: VERSION,
        written_at,
        record_name: input.shown === "standard input" ? "standard input" : basename(input.shown),
        keys,
        recheck,
        envelope: source === undefined || this.envelope === undefined ? null : await envelopeData(input.path, source, basename(this.envelope), damage),
        checkpoints: given.length === 0 ? null : await checkpointData(input.path, input.shown, keys, given),
      };
      await this.write(out, assets, data, { path: input.path, size });
    } finally {
      await source?.close();
    }
    await this.out(`wrote ${out}: open it in a browser; it verifies the record again there\n`);
    return 0;
  }

  private async write(out: string, assets: PageAssets, data: ReportData, record: { path: string; size: number } | undefined): Promise<void> {
    try {
      await replaceFileFromParts(out, reportPage(assets, data, record));
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError({ code: "output_dir", path: out, detail: describeIoError(error) });
    }
  }
}

/** The bundled page; missing only in a checkout where `npm run build` has not run. */
async function pageAssets(): Promise<PageAssets> {
  try {
    return await readPageAssets();
  } catch (error) {
    throw new CliError({ code: "internal", detail: `the bundled report page is missing (${describeIoError(error)}); run \`npm run build\`` });
  }
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", message, command: "report" });
}
