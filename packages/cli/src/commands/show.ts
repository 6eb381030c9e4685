import { Command, Option } from "clipanion";
import { RecordReadError, type Verification, verifyRecord } from "@aegis/format";
import { describeIoError as ioErrorText } from "@aegis/format/internal";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { rereadableRecord, type RecordInput } from "../record-input.js";
import { verifyJsonParts, verifyTextParts } from "../verify-report.js";
import { verifyJson } from "../verify-view.js";
import type { Entry } from "../show/entries.js";
import { entries } from "../show/entries-file.js";
import { approvalIndex } from "../show/index-pass.js";
import { renderEntry } from "../show/render.js";
import { callBytes, renderCallBytes } from "../show/envelope-view.js";
import { openSource } from "../envelope/source.js";
import { describeDamage, type EnvelopeSource } from "@aegis/envelope";
import { isLoss } from "@aegis/envelope/internal";
import { parseHostFilter, parsePathFilter, type AxisFilter, type AxisFilterParse } from "../show/touched.js";
import { filterJson, touchedLine, touchedSummary, touches } from "../show/touched-list.js";

export class ShowCommand extends AegisCommand {
  static override paths = [["show"]];

  static override usage = Command.Usage({
    description: "Give a readable account of a record: its sessions, and per call what was decided and why",
    details: `
      Verifies the record first (unpinned; use \`aegis verify --key\` to check whose it is) and prints the verdict, then every Session and every call in file order: its tool, the decision axes the policy saw, the policy verdict and matched rule, the capability and execution outcome, the digests of the request, response and policy set, and links between a parked call, the decision that answered it, and the call that resumed under it. Lines of types this version does not know are shown, not dropped. Entries after a break in the chain are marked as not verified.

      With \`--envelope\`, each call also shows the request and response bytes the Envelope holds for its digests (re-hashed as they are read): as text when they are UTF-8, else their size (\`--json\` gives the whole text, or base64), or why there are none: missing, redacted (when and why), or altered.

      With \`--path\` or \`--host\`, only the calls whose decision axes name that thing are listed, one line each, in record order: where the call is, when it began, its tool and what it touched, the policy verdict and rule, and how it ran; then how many calls named it. \`--path\` matches the canonical path the call resolved to, at or under the one given, by whole path components (\`/etc\` matches \`/etc/shadow\`, not \`/etcx\`); \`--host\` matches the endpoint's host, and its port when one is given (\`example.com:443\`, \`[::1]:8080\`). A call whose path or endpoint was not resolved to exactly one records none, and is not listed. Given both, a call must name both. \`--json\` gives the same calls as \`entries\`, with \`filter\`, \`matched\` and \`calls\`. The record is read as it streams: memory does not grow with its size.

      Exit code 0 when the record was read (whatever its verdict: \`aegis verify\` is the gate; also when no call named the path or host), 1 for a usage error or an unknown \`--call\`, 2 when it cannot be read.
    `,
    examples: [
      ["Everything in a record", "aegis show session.aarl"],
      ["One call and its approval links", "aegis show --call call-3 session.aarl"],
      ["As JSON", "aegis show --json session.aarl"],
      ["One call with the bytes it sent and got back", "aegis show --call call-3 --envelope session.envelope session.aarl"],
      ["Every call that touched a file under /etc", "aegis show --path /etc session.aarl"],
      ["Every call that talked to a host on port 443", "aegis show --host api.example.com:443 session.aarl"],
    ],
  });

  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  call = Option.String("--call", { description: "Show only the call with this call_id" });
  envelope = Option.String("--envelope", { description: "Also show each call's request and response bytes, from this Envelope store or pack" });
  touchedPath = Option.String("--path", { description: "List only the calls whose decision axes name this path or one under it" });
  touchedHost = Option.String("--host", { description: "List only the calls whose decision axes name this host (and port, when given)" });
  record = Option.String({ name: "PATH" });

  protected async run(): Promise<ExitCode> {
    const filters = this.filters();
    // Read twice (verify, then the entries): standard input is held in a file meanwhile.
    const input = await rereadableRecord(this.record);
    try {
      const source = this.envelope === undefined ? undefined : await openSource(this.envelope);
      try {
        for (const d of source?.damage ?? []) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
        return await this.show(input, source, filters);
      } finally {
        await source?.close();
      }
    } finally {
      await input.dispose();
    }
  }

  /** `--path` and `--host`, checked before anything is read. */
  private filters(): AxisFilter[] {
    const given: [string, string | undefined, (text: string) => AxisFilterParse][] = [
      ["--path", this.touchedPath, parsePathFilter],
      ["--host", this.touchedHost, parseHostFilter],
    ];
    const filters: AxisFilter[] = [];
    for (const [flag, text, parse] of given) {
      if (text === undefined) continue;
      const parsed = parse(text);
      if (!parsed.ok) throw new CliError({ code: "usage", message: `${flag}: ${parsed.detail}`, command: "show" });
      filters.push(parsed.filter);
    }
    if (filters.length > 0 && this.call !== undefined)
      throw new CliError({
        code: "usage",
        message: "--call shows one call; --path and --host list the calls that touched a thing: give one or the other",
        command: "show",
      });
    return filters;
  }

  private async show(input: RecordInput, source: EnvelopeSource | undefined, filters: readonly AxisFilter[]): Promise<ExitCode> {
    const index = approvalIndex();
    let verification: Verification;
    try {
      verification = await verifyRecord({ path: input.path }, { onLine: index.onLine });
    } catch (error) {
      if (error instanceof RecordReadError) throw new CliError({ code: "unreadable_record", path: input.shown, detail: ioErrorText(error.cause) });
      throw error;
    }
    const stopped =
      verification.verdict.status === "tampered" || (verification.verdict.status === "indeterminate" && verification.verdict.reason.code === "line_too_long");
    // Rows the verifier did not accept, or did not see (a live writer may have appended
    // since), are marked: nothing there is vouched for.
    const breakLine = stopped ? verification.lines : verification.lines + 1;
    // A call, the decision on its park, and any call that resumed under that approval.
    const parkedByThisCall = (approval: string | undefined): boolean => approval !== undefined && index.links.parkedBy.get(approval)?.call_id === this.call;
    const selected = (e: Entry): boolean =>
      this.call === undefined ||
      (e.kind === "call" && (e.call_id === this.call || parkedByThisCall(e.outcome?.record.decision_axes.approval_ref))) ||
      (e.kind === "decision" && parkedByThisCall(e.record.approval_id));

    // One call is small: hold it, so that an unknown --call prints nothing to stdout.
    const held: Entry[] = [];
    const emit = async (entry: Entry, first: boolean): Promise<string> => {
      const bytes = source === undefined || entry.kind !== "call" ? undefined : await callBytes(source, entry);
      if (this.json) return `${first ? "\n" : ",\n"}${JSON.stringify(bytes === undefined ? entry : { ...entry, envelope: bytes })}`;
      return `\n${renderEntry(entry, index.links)}${bytes === undefined ? "" : `\n${renderCallBytes(bytes)}`}`;
    };
    // The head in parts: a file can leave a million calls in flight in the verification.
    const writeHead = async (): Promise<void> => {
      if (!this.json) {
        for (const part of verifyTextParts(verification)) await this.out(part);
        return;
      }
      // `{"schema":...,"verification":{...}}` with its closing brace left for the entries.
      let last = "";
      for (const part of verifyJsonParts({ schema: "aegis.show/1", verification: verifyJson(verification, false) }, 0)) {
        if (last !== "") await this.out(last);
        last = part;
      }
      const filter = filters.length === 0 ? "" : `,"filter":${JSON.stringify(filterJson(filters))}`;
      await this.out(`${last.slice(0, -1)}${filter},"entries":[`);
    };
    const tail = this.json ? "\n]}\n" : "\n";
    if (filters.length > 0) {
      // SPEC §13.4: one call at a time, as it streams; only counts are kept.
      await writeHead();
      let matched = 0;
      let calls = 0;
      for await (const entry of entries(input.path, breakLine)) {
        if (entry.kind === "call" && entry.outcome !== undefined) calls++;
        if (!touches(entry, filters)) continue;
        const bytes = source === undefined ? undefined : await callBytes(source, entry);
        if (this.json) await this.out(`${matched === 0 ? "\n" : ",\n"}${JSON.stringify(bytes === undefined ? entry : { ...entry, envelope: bytes })}`);
        else await this.out(`${matched === 0 ? "\n" : ""}${touchedLine(entry)}\n${bytes === undefined ? "" : `${renderCallBytes(bytes)}\n`}`);
        matched++;
      }
      await this.out(this.json ? `\n],"matched":${matched},"calls":${calls}}\n` : `\n${touchedSummary(matched, calls, filters)}\n`);
      return 0;
    }
    if (this.call === undefined) {
      await writeHead();
      let first = true;
      for await (const entry of entries(input.path, breakLine)) {
        await this.out(await emit(entry, first));
        first = false;
      }
      await this.out(tail);
      return 0;
    }
    for await (const entry of entries(input.path, breakLine)) if (selected(entry)) held.push(entry);
    if (held.length === 0) throw new CliError({ code: "no_such_call", callId: this.call });
    const shown: string[] = [];
    for (const [i, e] of held.entries()) shown.push(await emit(e, i === 0));
    await writeHead();
    await this.out(shown.join("") + tail);
    return 0;
  }
}
