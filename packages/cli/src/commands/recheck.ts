import { describeIoError, readJsonFile, unmatched } from "@aegis/format/internal";
import { RecordReadError, describeVerdict, readVerifying, type ToolSpecDigest, type Verification } from "@aegis/format";
import { Command, Option } from "clipanion";
import { match } from "ts-pattern";
import { pinListing } from "@aegis/mcp/internal";
import { type Json } from "@aegis/mcp";
import { EnvelopeError, describeDamage, type EnvelopeSource } from "@aegis/envelope";
import { isLoss } from "@aegis/envelope/internal";
import { openSource } from "../envelope/source.js";
import { describeRecheckLine, recheckRecord, type PolicySet, type RecheckTarget, type RecheckVerdict, type SkippedRow } from "@aegis/policy";
import { RecheckTally, exitCodeOfRecheck, explainIndeterminate, type RecheckConclusion } from "@aegis/policy/internal";
import { AegisCommand, StdoutClosed } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError, exitCodeOfFault, renderFault, type CliFault } from "../fault.js";
import { Progress } from "../progress.js";
import { checkKeyArgument, readTrustStore } from "../trust-store.js";
import { readPolicy, readPolicyDir } from "../policy-file.js";
import { STDIN, streamedRecord, type RecordInput } from "../record-input.js";
import { Spool } from "../spool.js";
import { StreamedDocument } from "../json-stream.js";
import { verifyJson } from "../verify-view.js";

export class RecheckCommand extends AegisCommand {
  static override paths = [["recheck"]];

  static override usage = Command.Usage({
    description: "Would this policy have decided the recorded calls the same way?",
    details: `
      Reads the record once (a file, a pipe, or \`-\` for standard input), verifying it as it re-evaluates every recorded outcome under the Policy Set; reports the record's verdict on stderr first, then prints one line per outcome, in file order: \`call <call_id|-> session <i> seq <n>: <clause>\`, where the clause is \`unchanged <status>\`, \`newly_blocked was=<s> now=denied\`, \`newly_allowed was=<s> now=allowed\`, \`newly_parked was=<s>\` or \`indeterminate <reason>\`. The reasons: \`missing_envelope\` and \`envelope_digest_mismatch\` (an argument matcher needs request bytes that are absent, redacted, or altered), \`unknown_policy_set_hash\` (no set given hashes to the one the call recorded), \`no_binding\` (a rule needs a parameter the record did not bind), \`rate_limit_unevaluable\` (a rate limit depends on state no record carries).

      With \`--current-tools <FILE>\` (a server's \`tools/list\` answer), each line also says whether the definition of the call's tool, as its outcome recorded it (\`tool_spec_digest\`, written by \`aegis wrap\`), is the one listed now: \`; tool_spec unchanged|changed|removed|unpinned\`. A changed or removed definition counts as a change (exit 1).

      With \`--as-recorded --policies <DIR>\`, each call is rechecked under the set its outcome names by \`policy_set_hash\`, among the Policy Sets in the directory. \`--envelope\` gives the request bytes that argument matchers need.

      A record that is not Verified (Tampered, or Indeterminate) never passes, and no verdict line is printed for its calls: a verdict about calls that may be forged is no evidence. The exit code is 1, \`--json\`'s document holds no verdicts, its conclusion is \`record_not_verified\` and its \`error\` says why. \`--unverified-ok\` prints the verdicts and lets the policy's answer alone decide the exit code, as the reference does; \`--require-verified\` refuses such a record before rechecking anything.

      Exit codes: 0 every call unchanged, 1 some call changed (or the record is not Verified, or a usage error, or nothing to recheck), 2 the policy, record or Envelope could not be read, 3 some call is indeterminate (outranks 1, not a record that is not Verified).
    `,
    examples: [
      ["Would today's policy have decided the same?", "aegis recheck --policy policy.yaml session.aarl"],
      ["Argument matchers read the request bytes from the Envelope", "aegis recheck --policy policy.yaml --envelope session.envelope session.aarl"],
      [
        "Each call under the set it recorded, refusing an unverified record",
        "aegis recheck --as-recorded --policies policies/ --require-verified --key 3de537a0...4e2c session.aarl",
      ],
      ["Every verdict with both matched rules, and the counts", "aegis recheck --json --policy policy.yaml session.aarl"],
      [
        "Which calls were made under a tool definition the server has since changed?",
        "aegis recheck --policy policy.yaml --current-tools tools-now.json session.aarl",
      ],
      ["A record from a pipe", "cat session.aarl | aegis recheck --policy policy.yaml -"],
    ],
  });

  policy = Option.String("--policy", { description: "The Policy Set to recheck every call under" });
  asRecorded = Option.Boolean("--as-recorded", false, { description: "Recheck each call under the set its outcome recorded (needs --policies)" });
  policies = Option.String("--policies", { description: "A directory of Policy Sets, for --as-recorded" });
  envelope = Option.String("--envelope", { description: "An Envelope store directory or pack, for argument matchers" });
  keys = Option.Array("--key", [], { description: "A trusted public key for verifying the record, 64 lowercase hex (repeatable)", arity: 1 });
  trustStore = Option.String("--trust-store", { description: "A file of trusted public keys, one per line, for verifying the record" });
  requireVerified = Option.Boolean("--require-verified", false, { description: "Refuse a record that is not Verified before rechecking anything" });
  unverifiedOk = Option.Boolean("--unverified-ok", false, {
    description: "Let the policy alone decide the exit code, even for a record that is not Verified (the reference's behaviour)",
  });
  currentTools = Option.String("--current-tools", { description: "A server's tools/list answer: say, per call, whether its tool's definition changed since" });
  quiet = Option.Boolean("-q,--quiet", false, { description: "Print nothing on stdout: the exit code alone says it" });

  protected override get quietStdout(): boolean {
    return this.quiet;
  }

  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text" });
  record = Option.String({ name: "PATH" });

  protected async run(): Promise<ExitCode> {
    const keys = [...this.keys.map(checkKeyArgument), ...(this.trustStore === undefined ? [] : await readTrustStore(this.trustStore))];
    if (this.trustStore !== undefined && keys.length === 0) throw new CliError({ code: "empty_trust_store", path: this.trustStore });
    const sets = await this.policySets();
    const currentTools = this.currentTools === undefined ? undefined : await readToolsList(this.currentTools, (text) => this.context.stderr.write(text));
    const target: RecheckTarget = this.asRecorded ? { code: "as_recorded", sets } : { code: "policy", policy: sets[0] ?? unreachableSet() };
    const input = await streamedRecord(this.record);
    try {
      // Opened before the long walk, so a wrong path fails at once.
      const envelope = this.envelope === undefined ? undefined : await openSource(this.envelope);
      try {
        return await this.verifyAndRecheck({ input, keys, sets, target, envelope, currentTools });
      } finally {
        await envelope?.close();
      }
    } finally {
      await input.dispose();
    }
  }

  private async verifyAndRecheck(given: RecheckGiven): Promise<ExitCode> {
    for (const d of given.envelope?.damage ?? []) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
    // One read of the record both verifies and rechecks it (a pipe works); what recheck
    // says waits in a spool until the verdict, which is printed first, is known.
    const run: RecheckRun = { ...given, spool: new Spool(), document: new StreamedDocument("verdicts") };
    try {
      return await this.report(run, await this.readOnce(run));
    } finally {
      run.spool.dispose();
    }
  }

  /** The one pass: every row walked by the verifier, every outcome rechecked, output spooled. */
  private async readOnce({ input, keys, target, envelope, currentTools, spool, document }: RecheckRun): Promise<RecheckPass> {
    const tally = new RecheckTally();
    const specs: SpecTally = { unchanged: 0, changed: 0, removed: 0, unpinned: 0 };
    const progress = new Progress(this.context.stderr, "verifying and rechecking", input.size ?? 0);
    const onSkippedRow = (row: SkippedRow): void => {
      const what = match(row)
        .with({ code: "does_not_parse" }, (r) => r.detail)
        .with({ code: "too_long" }, (r) => `${r.length} bytes, over the ${r.limit}-byte row limit`)
        .exhaustive(unmatched);
      spool.add("err", `warning: line ${row.line} skipped: ${what}\n`);
    };
    const source = input.path === STDIN ? { stream: process.stdin, name: input.shown } : input.path;
    const read = readVerifying(source, { ...(keys.length > 0 ? { trust: keys } : {}), onProgress: (bytes) => progress.update(bytes) });
    let fault: CliFault | undefined;
    try {
      const verdicts = recheckRecord(read.rows, target, {
        ...(envelope === undefined ? {} : { envelope: (digest) => envelope.get(digest) }),
        onSkippedRow,
        ...(currentTools === undefined ? {} : { currentTools }),
      });
      for await (const verdict of verdicts) {
        tally.add(verdict);
        if (verdict.tool_spec !== undefined) specs[verdict.tool_spec.code]++;
        if (this.json) {
          spool.add("out", document.item(verdictJson(verdict)));
        } else {
          spool.add("out", `${describeRecheckLine(verdict)}${verdict.tool_spec === undefined ? "" : `; tool_spec ${verdict.tool_spec.code}`}\n`);
          if (verdict.code === "indeterminate")
            spool.add("err", `note: call ${verdict.call_id ?? "-"} seq ${verdict.seq}: ${explainIndeterminate(verdict.reason)}\n`);
        }
      }
    } catch (error) {
      if (error instanceof RecordReadError) throw this.unreadable(input, error.cause);
      if (error instanceof CliError || error instanceof StdoutClosed) throw error;
      fault =
        error instanceof EnvelopeError
          ? { code: "envelope", fault: error.fault }
          : { code: "unreadable_record", path: input.shown, detail: describeIoError(error) };
      // The verdict is still owed: the rest of the record is read for it, rechecking nothing.
      try {
        for await (const row of read.rows) void row;
      } catch (rest) {
        if (rest instanceof RecordReadError) throw this.unreadable(input, rest.cause);
        throw rest;
      }
    } finally {
      progress.finish();
    }
    return { verification: await read.verification(), tally, specs, fault };
  }

  /** The verdict, then what the spool holds, then the summary: as if verify had run first. */
  private async report(run: RecheckRun, { verification, tally, specs, fault }: RecheckPass): Promise<ExitCode> {
    const { spool, document } = run;
    const pinned = run.keys.length > 0;
    const toolsGiven = run.currentTools !== undefined;
    const verdictText = describeVerdict(verification);
    this.context.stderr.write(`record: ${verdictText}\n`);
    const json = this.json;
    const gate = this.gateOf(verification, verdictText);
    if (gate !== undefined) {
      // Verdicts about a record no one can vouch for are not printed (SPEC §16.5, [M16.6]): the
      // document holds none. Without --require-verified, the warnings and notes still are.
      const refused = new StreamedDocument("verdicts");
      if (json) await this.out(refused.start(this.jsonHead(verification, pinned, run.sets)) + refused.end(faultJson(gate)));
      if (gate.gate === "default")
        await spool.replay(async (stream, text) => {
          if (stream !== "out") this.context.stderr.write(text);
        });
      throw new CliError(gate);
    }
    if (json) await this.out(document.start(this.jsonHead(verification, pinned, run.sets)));
    await spool.replay(async (stream, text) => {
      if (stream === "out") await this.out(text);
      else this.context.stderr.write(text);
    });
    if (fault !== undefined) {
      // Close the JSON document, so that what was printed still parses, and says why it stops.
      if (json) await this.out(document.end({ error: renderFault(fault).error, exit_code: exitCodeOfFault(fault) }));
      throw new CliError(fault);
    }
    const conclusion = tally.conclusion;
    const exit = exitOf(conclusion, specs);
    if (toolsGiven)
      this.context.stderr.write(`tool_spec: ${specs.unchanged} unchanged, ${specs.changed} changed, ${specs.removed} removed, ${specs.unpinned} unpinned\n`);
    if (json)
      await this.out(document.end({ summary: tally.summary, ...(toolsGiven ? { tool_specs: specs } : {}), conclusion: conclusion.code, exit_code: exit }));
    if (conclusion.code === "nothing_rechecked") throw new CliError({ code: "nothing_rechecked", path: run.input.shown });
    return exit;
  }

  /**
   * Why the verdicts of a record that did not verify are withheld: they are about calls that
   * may be forged. The reference prints them; here `--unverified-ok` asks for that, and
   * `--require-verified` refuses even then. Undefined when they are printed.
   */
  private gateOf(verification: Verification, verdict: string): Extract<CliFault, { code: "not_verified" }> | undefined {
    if (verification.verdict.status === "verified") return undefined;
    if (this.requireVerified) return { code: "not_verified", verdict, gate: "require_verified" };
    return this.unverifiedOk ? undefined : { code: "not_verified", verdict, gate: "default" };
  }

  private unreadable(input: RecordInput, cause: unknown): CliError {
    return new CliError({ code: "unreadable_record", path: input.shown, detail: describeIoError(cause) });
  }

  private jsonHead(verification: Verification, pinned: boolean, sets: readonly PolicySet[]): Record<string, unknown> {
    return {
      schema: "aegis.recheck/1",
      record: verifyJson(verification, pinned),
      mode: this.asRecorded ? "as_recorded" : "policy",
      policy_set_hashes: sets.map((s) => s.hash),
    };
  }

  /** The sets to recheck under; usage errors for a mode given half. */
  private async policySets(): Promise<PolicySet[]> {
    if (this.asRecorded) {
      if (this.policies === undefined) throw usage("--as-recorded needs --policies <DIR>: the Policy Sets to find each call's among");
      if (this.policy !== undefined) throw usage("give either --policy or --as-recorded --policies, not both");
      return readPolicyDir(this.policies);
    }
    if (this.policies !== undefined) throw usage("--policies is only read with --as-recorded");
    if (this.policy === undefined) throw usage("recheck needs --policy <YAML> (or --as-recorded --policies <DIR>)");
    return [await readPolicy(this.policy)];
  }
}

/** What recheck was given to read the record with. */
interface RecheckGiven {
  readonly input: RecordInput;
  readonly keys: readonly string[];
  readonly sets: readonly PolicySet[];
  readonly target: RecheckTarget;
  readonly envelope: EnvelopeSource | undefined;
  readonly currentTools: ReadonlyMap<string, ToolSpecDigest> | undefined;
}

/** A recheck under way: what it was given, and where its output waits until the verdict is known. */
interface RecheckRun extends RecheckGiven {
  readonly spool: Spool;
  readonly document: StreamedDocument;
}

/** What the one pass over the record found. */
interface RecheckPass {
  readonly verification: Verification;
  readonly tally: RecheckTally;
  readonly specs: SpecTally;
  /** Why the pass stopped rechecking (the Envelope failed, the record could not be read), if it did. */
  readonly fault: CliFault | undefined;
}

/**
 * The exit code of a recheck of a verified record (SPEC §16.5): the conclusion's, and a call
 * made under a tool definition that has since changed or gone is a change too (an
 * indeterminate answer still outranks it).
 */
function exitOf(conclusion: RecheckConclusion, specs: SpecTally): ExitCode {
  const policy = exitCodeOfRecheck(conclusion);
  return policy === 0 && specs.changed + specs.removed > 0 ? 1 : policy;
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", message, command: "recheck" });
}

function unreachableSet(): never {
  throw new CliError({ code: "internal", detail: "no Policy Set was read" });
}

/**
 * The tool definitions a server lists now: its `tools/list` result (`{"tools": [...]}`), or
 * the whole response holding it, pinned as wrap pins them (SPEC §17.6).
 */
async function readToolsList(path: string, warn: (text: string) => void): Promise<ReadonlyMap<string, ToolSpecDigest>> {
  const read = await readJsonFile(path, MAX_TOOLS_LIST_BYTES);
  if (!read.ok) throw new CliError({ code: "bad_tools_list", path, detail: read.detail });
  const value = read.value as Json;
  const result =
    typeof value === "object" && value !== null && !Array.isArray(value) && "result" in value ? (value as { readonly result: Json }).result : value;
  const listing = pinListing(result);
  if (listing === undefined)
    throw new CliError({ code: "bad_tools_list", path, detail: 'expected a tools/list result ({"tools": [...]}) or the response holding one' });
  if (listing.unreadable > 0) warn(`warning: ${listing.unreadable} entries of ${path} are no tool definition (no string name), and were skipped\n`);
  return new Map(listing.pinned.map((p) => [p.name, p.digest]));
}

const MAX_TOOLS_LIST_BYTES = 64 * 1024 * 1024;

/** Calls by what `--current-tools` says of their tool's definition. */
type SpecTally = { unchanged: number; changed: number; removed: number; unpinned: number };

/** The members that close a document whose run was refused: why, and the exit code. */
function faultJson(fault: CliFault): { readonly conclusion: string; readonly error: string; readonly exit_code: ExitCode } {
  return { conclusion: "record_not_verified", error: renderFault(fault).error, exit_code: exitCodeOfFault(fault) };
}

/** A verdict as JSON: every field, both matched rules, nothing renamed. */
function verdictJson(verdict: RecheckVerdict): Record<string, unknown> {
  return { ...verdict, clause: describeRecheckLine(verdict) };
}
