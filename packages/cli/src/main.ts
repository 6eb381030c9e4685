import { messageOf } from "@aegis/format/internal";
import { Builtins, Cli, UsageError, type BaseContext } from "clipanion";
import { CheckpointCommand } from "./commands/checkpoint.js";
import { DemoCommand } from "./commands/demo.js";
import { ProofVerifyCommand } from "./commands/proof-verify.js";
import { ProveCommand } from "./commands/prove.js";
import { KeygenCommand } from "./commands/keygen.js";
import { RepairCommand } from "./commands/repair.js";
import { ShowCommand } from "./commands/show.js";
import { EnvelopeExpireCommand } from "./commands/envelope/expire.js";
import { EnvelopeGetCommand } from "./commands/envelope/get.js";
import { EnvelopePackCommand } from "./commands/envelope/pack.js";
import { EnvelopeRedactCommand } from "./commands/envelope/redact.js";
import { EnvelopeVerifyCommand } from "./commands/envelope/verify.js";
import { RecheckCommand } from "./commands/recheck.js";
import { ReportCommand } from "./commands/report.js";
import { VectorsCommand } from "./commands/vectors.js";
import { VerifyCommand } from "./commands/verify.js";
import { WrapCommand } from "./commands/wrap.js";
import { ApproveCommand } from "./commands/approve.js";
import { ExportCommand } from "./commands/export.js";
import { watchForClosedReader } from "./command.js";
import { exitCodeOfFault, renderFault, type CliFault } from "./fault.js";
import { VERSION } from "./version.js";

/** clipanion writes an option's value as `#0`; say what it is. */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  "--key": "<HEX>",
  "--trust-store": "<PATH>",
  "--out": "<PATH>",
  "--call": "<ID>",
  "--policy": "<YAML>",
  "--policies": "<DIR>",
  "--envelope": "<DIR|PACK>",
  "--reason": "<TEXT>",
  "--audit": "<PATH>",
  "--signing-key": "<PATH>",
  "--bindings": "<YAML>",
  "--role": "<ROLE>",
  "--session": "<SESSION>",
  "--control": "<PATH>",
  "--control-group": "<NAME|GID>",
  "--checkpoint": "<FILE>",
  "--format": "<FORMAT>",
  "--path": "<PATH>",
  "--host": "<HOST[:PORT]>",
  "--before": "<UTC-DATE>",
  "--record": "<PATH>",
};

class AegisCli extends Cli {
  override usage(...args: Parameters<Cli["usage"]>): string {
    const [command] = args;
    // Only redaction is limited to a store directory; every other --envelope also takes a pack.
    const storeOnly = [EnvelopeRedactCommand, EnvelopeExpireCommand, WrapCommand].some((c) => command === c || command instanceof c);
    const text = super
      .usage(...args)
      .replace(/--envelope #0/g, storeOnly ? "--envelope <DIR>" : "--envelope #0")
      .replace(/(--[a-z-]+) #0/g, (_whole, name: string) => `${name} ${PLACEHOLDERS[name] ?? "<VALUE>"}`)
      .replace(/<(--[a-z-]+ <[A-Z|:[\]-]+>)>/g, "$1");
    return alignOptions(text);
  }
}

/** Re-align the option list, whose column clipanion computed for the `#0` spelling. */
function alignOptions(text: string): string {
  const option = /^ {2}(--\S+(?: <[A-Z|:[\]-]+>)?) {2,}(\S.*)$/;
  const lines = text.split("\n");
  const width = Math.max(0, ...lines.map((l) => option.exec(l)?.[1]?.length ?? 0));
  return lines
    .map((l) => {
      const m = option.exec(l);
      return m === null ? l : `  ${(m[1] ?? "").padEnd(width + 2)}${m[2] ?? ""}`;
    })
    .join("\n");
}

/** Every command by its path as typed (`envelope get`), for usage errors' synopsis. */
const COMMAND_CLASSES = {
  verify: VerifyCommand,
  recheck: RecheckCommand,
  show: ShowCommand,
  report: ReportCommand,
  keygen: KeygenCommand,
  repair: RepairCommand,
  checkpoint: CheckpointCommand,
  prove: ProveCommand,
  "proof verify": ProofVerifyCommand,
  demo: DemoCommand,
  vectors: VectorsCommand,
  "envelope verify": EnvelopeVerifyCommand,
  "envelope get": EnvelopeGetCommand,
  "envelope redact": EnvelopeRedactCommand,
  "envelope pack": EnvelopePackCommand,
  "envelope expire": EnvelopeExpireCommand,
  wrap: WrapCommand,
  approve: ApproveCommand,
  export: ExportCommand,
} as const;
type CommandName = keyof typeof COMMAND_CLASSES;

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMAND_CLASSES, name);
}

/**
 * The `aegis` command line with every command registered, not yet run: {@link main} runs
 * it. Run through clipanion directly instead, a bad command line gets clipanion's handling
 * (its message on stdout), not main's `error:` and `help:` lines on stderr with exit code 1.
 */
export function buildCli(): Cli {
  const cli = new AegisCli({
    binaryLabel: "aegis: provable records of what an AI agent did",
    binaryName: "aegis",
    binaryVersion: VERSION,
    enableColors: false,
    enableCapture: false,
  });
  for (const command of [...Object.values(COMMAND_CLASSES), Builtins.HelpCommand, Builtins.VersionCommand]) {
    cli.register(command);
  }
  return cli;
}

/**
 * Run the CLI. Usage errors go to stderr as `error:`/`help:` lines with exit code 1
 * (clipanion would print them to stdout); `--help` goes to stdout with exit code 0.
 */
export async function main(argv: readonly string[], context: Partial<BaseContext> = {}): Promise<number> {
  const cli = buildCli();
  const ctx = { ...Cli.defaultContext, ...context };
  watchForClosedReader(ctx.stdout);
  if (argv.length === 0) return usageFault(ctx, cli, { code: "usage", message: "no command given", command: "" });
  const subs = commandGroups().get(argv[0] ?? "");
  if (subs !== undefined && argv.length === 2 && (argv[1] === "--help" || argv[1] === "-h")) {
    ctx.stdout.write(groupHelp(argv[0] ?? "", subs));
    return 0;
  }
  let command;
  try {
    command = cli.process([...argv], ctx);
  } catch (error) {
    const name = commandName(argv);
    return usageFault(ctx, cli, { code: "usage", message: usageMessage(error, name, argv, cli), command: name ?? "" });
  }
  return cli.run(command, ctx);
}

/** `error:` says what was wrong; `help:` gives the command's synopsis, or the command list. */
function usageFault(ctx: BaseContext, cli: Cli, fault: Extract<CliFault, { code: "usage" }>): number {
  const { error } = renderFault(fault);
  const name = isCommandName(fault.command) ? fault.command : undefined;
  const help =
    name === undefined
      ? `commands: ${Object.keys(COMMAND_CLASSES).join(", ")}; run \`aegis --help\` for more`
      : `usage: ${cli.usage(COMMAND_CLASSES[name], { detailed: false, colored: false }).replace(/^\$ /, "").trim()}; run \`aegis ${name} --help\` for more`;
  ctx.stderr.write(`error: ${error}\nhelp: ${help}\n`);
  return exitCodeOfFault(fault);
}

/** The command the arguments name: two words (`envelope get`) before one. */
function commandName(argv: readonly string[]): CommandName | undefined {
  const two = `${argv[0] ?? ""} ${argv[1] ?? ""}`;
  if (isCommandName(two)) return two;
  const first = argv[0] ?? "";
  return isCommandName(first) ? first : undefined;
}

/** `aegis envelope --help`: each subcommand and what it does. */
function groupHelp(group: string, subs: readonly string[]): string {
  const lines = subs.map((sub) => {
    const name = `${group} ${sub}`;
    const description = isCommandName(name) ? (COMMAND_CLASSES[name].usage?.description ?? "") : "";
    return `  aegis ${name.padEnd(16)} ${description}`;
  });
  return `aegis ${group}: one of\n\n${lines.join("\n")}\n\nRun \`aegis ${group} <subcommand> --help\` for its options and examples.\n`;
}

/** The positional argument each command requires, as its help names it. */
function positionalOf(name: CommandName | undefined): string {
  if (name === "wrap") return "the server to start: -- <CMD> [ARGS...]";
  if (name === "approve") return "<APPROVAL_ID>";
  return name === "envelope get" || name === "envelope redact" ? "<DIGEST>" : "<PATH>";
}

/** The first words of multi-word commands (`envelope`), and their second words. */
function commandGroups(): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const name of Object.keys(COMMAND_CLASSES)) {
    const [group, sub] = name.split(" ");
    if (group !== undefined && sub !== undefined) groups.set(group, [...(groups.get(group) ?? []), sub]);
  }
  return groups;
}

/** clipanion does not export its syntax error classes; recognise them by shape. */
interface SyntaxFailure {
  readonly name: "UnknownSyntaxError" | "AmbiguousSyntaxError";
  readonly input: readonly string[];
  readonly candidates?: readonly { readonly reason: string | null }[];
}

function isSyntaxFailure(error: unknown): error is SyntaxFailure {
  return (
    error instanceof Error && (error.name === "UnknownSyntaxError" || error.name === "AmbiguousSyntaxError") && "input" in error && Array.isArray(error.input)
  );
}

/** One line saying what was wrong with the command line, from clipanion's diagnosis. */
function usageMessage(error: unknown, name: CommandName | undefined, argv: readonly string[], cli: Cli): string {
  if (isSyntaxFailure(error) && error.name === "UnknownSyntaxError") {
    const reasons = [...new Set((error.candidates ?? []).map((c) => c.reason).filter((r): r is string => r !== null))];
    if (reasons.length > 0) return reasons.map((r) => humanReason(r, name)).join("; ");
    if (name === undefined) {
      const first = argv[0] ?? "";
      const subs = commandGroups().get(first);
      if (subs !== undefined)
        return argv[1] === undefined
          ? `${first} needs a subcommand: ${subs.join(", ")}`
          : `unknown subcommand: ${first} ${argv[1]} (one of ${subs.join(", ")})`;
      return first.startsWith("-") ? `unknown flag: ${first}` : `unknown command: ${first}`;
    }
    const missing = missingRequired(cli, name, argv);
    if (missing.length > 0) return missing.map((o) => `${name} requires ${o.flag} (${o.description})`).join("; ");
    return `these arguments do not form an \`aegis ${name}\` command`;
  }
  if (isSyntaxFailure(error)) return "these arguments match more than one command";
  if (error instanceof UsageError) return error.message;
  return messageOf(error);
}

/** The required options of `aegis <name>` that `argv` does not give: clipanion gives no reason for them. */
function missingRequired(cli: Cli, name: CommandName, argv: readonly string[]): { readonly flag: string; readonly description: string }[] {
  const definition = cli.definitions().find((d) => d.path === `aegis ${name}`);
  const given = new Set(argv.map((a) => a.split("=")[0]));
  return (definition?.options ?? [])
    .filter((o) => o.required)
    .map((o) => ({ names: (o.definition.split(" ")[0] ?? "").split(","), description: o.description ?? "" }))
    .filter((o) => !o.names.some((n) => given.has(n)))
    .map((o) => ({ flag: o.names.at(-1) ?? "", description: o.description.replace(/^./, (c) => c.toLowerCase()) }));
}

/** clipanion's reasons, in the reference's words where it has them. */
function humanReason(reason: string, name: CommandName | undefined): string {
  const invalid = /^Invalid option name \("(--[a-z-]+)=(.*)"\)\.?$/.exec(reason);
  if (invalid !== null) return `${invalid[1] ?? ""} takes no value (got "${invalid[2] ?? ""}")`;
  const unsupported = /^Unsupported option name \("(.*)"\)\.?$/.exec(reason);
  if (unsupported !== null) return `unknown flag: ${unsupported[1] ?? ""}`;
  const extraneous = /^Extraneous positional argument \("(.*)"\)\.?$/.exec(reason);
  if (extraneous !== null) return `unexpected argument: ${extraneous[1] ?? ""}`;
  if (/^Not enough positional arguments/.test(reason)) return `${name ?? "this command"} requires ${positionalOf(name)}`;
  const missingValue = /^Not enough arguments to option (.*)\.?$/.exec(reason);
  if (missingValue !== null) return `${(missingValue[1] ?? "").replace(/\.$/, "")} needs a value`;
  return reason.replace(/\.$/, "");
}
