import { describeVerdict } from "@aegis/format";
import { describeIoError, replaceFileFromParts } from "@aegis/format/internal";
import { describeDamage } from "@aegis/envelope";
import { isLoss } from "@aegis/envelope/internal";
import { Command, Option } from "clipanion";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { openSource } from "../envelope/source.js";
import { planSpans, readForSpans } from "../export/collect.js";
import { loadKit, sendSpans, spanLines } from "../export/send.js";
import { Progress } from "../progress.js";
import { streamedRecord } from "../record-input.js";
import { checkKeyArgument, readTrustStore } from "../trust-store.js";
import { EXPORT_FORMATS } from "../usage-text.js";

export class ExportCommand extends AegisCommand {
  static override paths = [["export"]];

  static override usage = Command.Usage({
    description: "Export a record's calls as OpenTelemetry spans, each tied to its signed Line",
    details: `
      Verifies the record first, in the same pass that reads it: a Tampered record exports nothing (exit 1), and an Indeterminate one (a Session still open, a line type this build does not know) exports nothing unless \`--allow-indeterminate\` is given (exit 3). With \`--key\` or \`--trust-store\`, the record must also be signed by one of those keys.

      Each call becomes one span following the OpenTelemetry GenAI conventions for tool execution (\`execute_tool <tool>\`, \`gen_ai.tool.name\`, \`gen_ai.tool.call.id\`), from its intent's time to its outcome's, with status ERROR and \`error.type\` when it was refused, parked or failed; each Session becomes a span its calls hang from and link to. \`aegis.*\` attributes name the Line each span stands for (key id, Session, seq, line hash, request digest, policy verdict and rule, policy set hash), so a trace leads back to the evidence. Trace and span ids are derived from the record: exporting it again sends the same ids.

      With \`--envelope\`, each call's request and response bytes add what only they say: \`mcp.method.name\`, \`jsonrpc.request.id\`, a JSON-RPC error's code, and the trace a W3C \`traceparent\` in \`params._meta\` names, which the call's span then joins. Arguments and results are put on spans only with \`--include-content\`: they may hold secrets.

      \`--format otlp\` sends the spans over OTLP/HTTP to where the standard variables say: \`OTEL_EXPORTER_OTLP_ENDPOINT\` (or \`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT\`; default http://localhost:4318), \`OTEL_EXPORTER_OTLP_HEADERS\`, and \`OTEL_EXPORTER_OTLP_PROTOCOL\`, \`http/protobuf\` (the default) or \`http/json\`. \`--format otlp-json\` writes them in the OTLP JSON file form the OpenTelemetry Collector's file exporter writes and its receiver reads, one request per line, to \`--out\` or standard output. The verdict is printed on stderr.

      Exit codes: 0 exported; 1 Tampered (nothing exported) or a usage error; 2 the record or Envelope could not be read, a Line carries no time, or the spans could not be sent or written; 3 Indeterminate without --allow-indeterminate (nothing exported).
    `,
    examples: [
      [
        "Send a record's spans to a local OpenTelemetry Collector",
        "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 aegis export --format otlp --envelope session.envelope session.aarl",
      ],
      ["Write them in the Collector's file form", "aegis export --format otlp-json --out session.otlp.jsonl session.aarl"],
      [
        "Pinned to its signer's key, arguments and results included",
        "aegis export --format otlp --key 3de537a0...4e2c --envelope session.envelope --include-content session.aarl",
      ],
    ],
  });

  format = Option.String("--format", { required: true, description: "otlp: send over OTLP/HTTP; otlp-json: write the OTLP JSON file form" });
  outFile = Option.String("--out", { description: "With --format otlp-json: the file to write (default: standard output)" });
  envelope = Option.String("--envelope", { description: "An Envelope store or pack: each call's request and response bytes" });
  keys = Option.Array("--key", [], { description: "A trusted public key, 64 lowercase hex (repeatable)", arity: 1 });
  trustStore = Option.String("--trust-store", { description: "A file of trusted public keys, one per line" });
  allowIndeterminate = Option.Boolean("--allow-indeterminate", false, { description: "Export a record whose verdict is Indeterminate" });
  includeContent = Option.Boolean("--include-content", false, { description: "Put each call's arguments and result on its span (needs --envelope)" });
  record = Option.String({ name: "RECORD", required: true });

  protected async run(): Promise<ExitCode> {
    const format = EXPORT_FORMATS.find((f) => f === this.format);
    if (format === undefined) throw usage(`--format takes otlp or otlp-json, got ${JSON.stringify(this.format)}`);
    if (format === "otlp" && this.outFile !== undefined) throw usage("--out is for --format otlp-json: --format otlp sends to OTEL_EXPORTER_OTLP_ENDPOINT");
    if (this.includeContent && this.envelope === undefined)
      throw usage("--include-content needs --envelope: arguments and results are in the Envelope, not the record");
    const keys = [...this.keys.map(checkKeyArgument), ...(this.trustStore === undefined ? [] : await readTrustStore(this.trustStore))];
    if (this.trustStore !== undefined && keys.length === 0) throw new CliError({ code: "empty_trust_store", path: this.trustStore });
    const kit = await loadKit(format === "otlp");
    const input = await streamedRecord(this.record);
    const source = this.envelope === undefined ? undefined : await openSource(this.envelope);
    try {
      for (const d of source?.damage ?? []) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
      const progress = new Progress(this.context.stderr, "verifying", input.size ?? 0);
      let read;
      try {
        read = await readForSpans(input, keys, { onProgress: (bytes) => progress.update(bytes) });
      } finally {
        progress.finish();
      }
      const verdict = describeVerdict(read.verification);
      this.context.stderr.write(`record: ${verdict}\n`);
      // SPEC Appendix A.6: nothing of a record that does not hold is exported.
      const status = read.verification.verdict.status;
      if (status === "tampered") throw new CliError({ code: "export", fault: { code: "tampered", verdict } });
      if (status === "indeterminate" && !this.allowIndeterminate) throw new CliError({ code: "export", fault: { code: "indeterminate", verdict } });
      const plans = await planSpans(read, source, this.includeContent);
      const what = `${plans.length} span${plans.length === 1 ? "" : "s"} (${read.followed.calls} call${read.followed.calls === 1 ? "" : "s"}, ${read.followed.sessions} Session${read.followed.sessions === 1 ? "" : "s"})`;
      if (format === "otlp") {
        const endpoint = await sendSpans(kit, plans);
        this.context.stderr.write(`exported ${what} to ${endpoint}\n`);
      } else if (this.outFile === undefined) {
        for (const line of spanLines(kit, plans)) await this.out(line);
      } else {
        await write(this.outFile, spanLines(kit, plans));
        this.context.stderr.write(`wrote ${what} to ${this.outFile}\n`);
      }
    } finally {
      await source?.close();
      await input.dispose();
    }
    return 0;
  }
}

async function write(path: string, parts: Iterable<string>): Promise<void> {
  try {
    await replaceFileFromParts(path, parts);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError({ code: "output_dir", path, detail: describeIoError(error) });
  }
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", message, command: "export" });
}
