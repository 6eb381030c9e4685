import { messageOf } from "@aegis/format/internal";
import { Builtins, Cli, UsageError, type BaseContext, type CommandClass } from "clipanion";
import { watchForClosedReader } from "./command.js";
import { exitCodeOfFault, renderFault, type CliFault } from "./fault.js";
import { withPlaceholders } from "./usage-text.js";
import { VERSION } from "./version.js";

class AegisCli extends Cli {
  override usage(...args: Parameters<Cli["usage"]>): string {
    const [command] = args;
    const path = command === undefined || command === null ? undefined : pathOf(typeof command === "function" ? command : command.constructor);
    const text = super.usage(...args);
    // The list of every command (`aegis --help`) names each command at the start of its line.
    const lines = text.split("\n").map((line) => withPlaceholders(line, path ?? listedCommand(line)));
    return alignOptions(lines.join("\n"));
  }
}

/** A command class's path as typed (`envelope get`). */
function pathOf(command: unknown): string | undefined {
  const paths: unknown = typeof command === "function" && "paths" in command ? command.paths : undefined;
  const first: unknown = Array.isArray(paths) ? paths[0] : undefined;
  return Array.isArray(first) ? first.join(" ") : undefined;
}

/** The command a line of `aegis --help` describes (`  aegis envelope get --envelope ...`). */
function listedCommand(line: string): string | undefined {
  const words = /^ {2}aegis (\S+)(?: (\S+))?/.exec(line);
  if (words === null) return undefined;
  const two = `${words[1] ?? ""} ${words[2] ?? ""}`;
  return isCommandName(two) ? two : words[1];
}

/** Re-align the option list, whose column clipanion computed for the `#0` spelling. */
function alignOptions(text: string): string {
  const option = /^ {2}((?:-[a-z],)?--\S+(?: <[^<>\s]+>)?) {2,}(\S.*)$/;
  const lines = text.split("\n");
  const width = Math.max(0, ...lines.map((l) => option.exec(l)?.[1]?.length ?? 0));
  return lines
    .map((l) => {
      const m = option.exec(l);
      return m === null ? l : `  ${(m[1] ?? "").padEnd(width + 2)}${m[2] ?? ""}`;
    })
    .join("\n");
}

/**
 * Every command by its path as typed (`envelope get`), and how to load it. A command's module
 * is imported only when that command runs or its help is asked for: `aegis verify` does not
 * load the relay, and `aegis --version` loads no command at all (ADR 0023). A new command is
 * one file in commands/ and one line here.
 */
const COMMANDS = {
  verify: async () => (await import("./commands/verify.js")).VerifyCommand,
  recheck: async () => (await import("./commands/recheck.js")).RecheckCommand,
  show: async () => (await import("./commands/show.js")).ShowCommand,
  report: async () => (await import("./commands/report.js")).ReportCommand,
  keygen: async () => (await import("./commands/keygen.js")).KeygenCommand,
  repair: async () => (await import("./commands/repair.js")).RepairCommand,
  checkpoint: async () => (await import("./commands/checkpoint.js")).CheckpointCommand,
  prove: async () => (await import("./commands/prove.js")).ProveCommand,
  "proof verify": async () => (await import("./commands/proof-verify.js")).ProofVerifyCommand,
  demo: async () => (await import("./commands/demo.js")).DemoCommand,
  vectors: async () => (await import("./commands/vectors.js")).VectorsCommand,
  "envelope verify": async () => (await import("./commands/envelope/verify.js")).EnvelopeVerifyCommand,
  "envelope get": async () => (await import("./commands/envelope/get.js")).EnvelopeGetCommand,
  "envelope redact": async () => (await import("./commands/envelope/redact.js")).EnvelopeRedactCommand,
  "envelope pack": async () => (await import("./commands/envelope/pack.js")).EnvelopePackCommand,
  "envelope expire": async () => (await import("./commands/envelope/expire.js")).EnvelopeExpireCommand,
  wrap: async () => (await import("./commands/wrap.js")).WrapCommand,
  approve: async () => (await import("./commands/approve.js")).ApproveCommand,
  export: async () => (await import("./commands/export.js")).ExportCommand,
  "witness keygen": async () => (await import("./commands/witness-keygen.js")).WitnessKeygenCommand,
  "witness serve": async () => (await import("./commands/witness-serve.js")).WitnessServeCommand,
  completion: async () => (await import("./commands/completion.js")).CompletionCommand,
  man: async () => (await import("./commands/man.js")).ManCommand,
} as const satisfies Record<string, () => Promise<CommandClass>>;
type CommandName = keyof typeof COMMANDS;

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** The command line with the commands named registered, and their classes by name. */
interface Loaded {
  readonly cli: Cli;
  readonly classes: ReadonlyMap<CommandName, CommandClass>;
}

/**
 * The `aegis` command line with the commands named (by default every one) registered, not
 * yet run: {@link main} runs it. Run through clipanion directly instead, a bad command line
 * gets clipanion's handling (its message on stdout), not main's `error:` and `help:` lines
 * on stderr with exit code 1.
 */
async function buildCli(names: readonly CommandName[] = commandNames()): Promise<Loaded> {
  const cli = new AegisCli({
    binaryLabel: "aegis: provable records of what an AI agent did",
    binaryName: "aegis",
    binaryVersion: VERSION,
    enableColors: false,
    enableCapture: false,
  });
  const classes = new Map<CommandName, CommandClass>();
  for (const name of names) classes.set(name, await COMMANDS[name]());
  for (const command of [...classes.values(), Builtins.HelpCommand, Builtins.VersionCommand]) cli.register(command);
  return { cli, classes };
}

function commandNames(): CommandName[] {
  return Object.keys(COMMANDS).filter(isCommandName);
}

/**
 * Run the CLI. Usage errors go to stderr as `error:`/`help:` lines with exit code 1
 * (clipanion would print them to stdout); `--help` goes to stdout with exit code 0.
 */
export async function main(argv: readonly string[], context: Partial<BaseContext> = {}): Promise<number> {
  const ctx = { ...Cli.defaultContext, ...context };
  watchForClosedReader(ctx.stdout);
  // `aegis help` is `aegis --help`; `aegis help verify` is `aegis verify --help`; `aegis help --man` is `aegis man`.
  const args = argv[0] === "help" ? (argv[1] === "--man" && argv.length === 2 ? ["man"] : [...argv.slice(1), "--help"]) : argv;
  if (args.length === 0) return usageFault(ctx, undefined, { code: "usage", message: "no command given", command: "" });
  const subs = commandGroups().get(args[0] ?? "");
  if (subs !== undefined && args.length === 2 && (args[1] === "--help" || args[1] === "-h")) {
    ctx.stdout.write(await groupHelp(args[0] ?? "", subs));
    return 0;
  }
  const loaded = await buildCli(needed(args));
  let command;
  try {
    command = loaded.cli.process([...args], ctx);
  } catch (error) {
    const name = commandName(args);
    return usageFault(ctx, loaded, { code: "usage", message: usageMessage(error, name, args, loaded.cli), command: name ?? "" });
  }
  return loaded.cli.run(command, ctx);
}

/** The commands to load for these arguments: the one they name, a group's, every one for `aegis --help`, or none. */
function needed(argv: readonly string[]): CommandName[] {
  const first = argv[0] ?? "";
  if (argv.length === 1 && (first === "--help" || first === "-h")) return commandNames();
  // What describes every command needs every command.
  if (first === "completion" || first === "man") return commandNames();
  const name = commandName(argv);
  if (name !== undefined) return [name];
  return (commandGroups().get(first) ?? []).map((sub) => `${first} ${sub}`).filter(isCommandName);
}

/** `error:` says what was wrong; `help:` gives the command's synopsis, or the command list. */
function usageFault(ctx: BaseContext, loaded: Loaded | undefined, fault: Extract<CliFault, { code: "usage" }>): number {
  const { error } = renderFault(fault);
  const name = isCommandName(fault.command) ? fault.command : undefined;
  const command = name === undefined ? undefined : loaded?.classes.get(name);
  const help =
    name === undefined || command === undefined || loaded === undefined
      ? `commands: ${commandNames().join(", ")}; run \`aegis --help\` for more`
      : `usage: ${loaded.cli.usage(command, { detailed: false, colored: false }).replace(/^\$ /, "").trim()}; run \`aegis ${name} --help\` for more`;
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
async function groupHelp(group: string, subs: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const sub of subs) {
    const name = `${group} ${sub}`;
    const description = isCommandName(name) ? ((await COMMANDS[name]()).usage?.description ?? "") : "";
    lines.push(`  aegis ${name.padEnd(16)} ${description}`);
  }
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
  for (const name of commandNames()) {
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
    const reasons = [...new Set((error.candidates ?? []).map((c) => c.reason).filter((r): r is string => r !== null))].map((r) => humanReason(r, name, cli));
    // An unknown flag is the mistake; what clipanion then makes of the words after it is not.
    const flags = reasons.filter((r) => r.startsWith("unknown flag: "));
    if (reasons.length > 0) return (flags.length > 0 ? flags : reasons).join("; ");
    if (name === undefined) {
      const first = argv[0] ?? "";
      const subs = commandGroups().get(first);
      if (subs !== undefined)
        return argv[1] === undefined
          ? `${first} needs a subcommand: ${subs.join(", ")}`
          : `unknown subcommand: ${first} ${argv[1]} (one of ${subs.join(", ")})${suggest(nearest(argv[1], subs), first)}`;
      if (first.startsWith("-")) return `unknown flag: ${first}`;
      const near = nearest(first, [...commandNames().filter((n) => !n.includes(" ")), ...commandGroups().keys()]);
      return `unknown command: ${first}${near === undefined ? "" : `; did you mean ${near}?`}`;
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

/** `; did you mean <prefix> <word>?`, or nothing. */
function suggest(word: string | undefined, prefix: string): string {
  return word === undefined ? "" : `; did you mean ${prefix} ${word}?`;
}

/** The one candidate within two edits of `typed` (a typo, a letter swapped), closest first; none when it is not one. */
function nearest(typed: string, candidates: Iterable<string>): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const word of new Set(candidates)) {
    const distance = editDistance(typed, word);
    if (distance <= 2 && distance < typed.length && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  return best?.word;
}

/** Damerau-Levenshtein distance (adjacent swaps count once): `verfy` is one from `verify`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.MAX_SAFE_INTEGER;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row !== undefined) row[j] = value;
    }
  }
  return at(a.length, b.length);
}

/** clipanion's reasons, in the reference's words where it has them. */
function humanReason(reason: string, name: CommandName | undefined, cli: Cli): string {
  const invalid = /^Invalid option name \("(--[a-z-]+)=(.*)"\)\.?$/.exec(reason);
  if (invalid !== null) return `${invalid[1] ?? ""} takes no value (got "${invalid[2] ?? ""}")`;
  const unsupported = /^Unsupported option name \("(.*)"\)\.?$/.exec(reason);
  if (unsupported !== null) {
    const flag = unsupported[1] ?? "";
    const options =
      name === undefined
        ? []
        : (cli.definitions().find((d) => d.path === `aegis ${name}`)?.options ?? []).flatMap((o) => (o.definition.split(" ")[0] ?? "").split(","));
    const near = flag.startsWith("--")
      ? nearest(
          flag,
          options.filter((o) => o.startsWith("--")),
        )
      : undefined;
    return `unknown flag: ${flag}${near === undefined ? "" : `; did you mean ${near}?`}`;
  }
  const extraneous = /^Extraneous positional argument \("(.*)"\)\.?$/.exec(reason);
  if (extraneous !== null) return `unexpected argument: ${extraneous[1] ?? ""}`;
  if (/^Not enough positional arguments/.test(reason)) return `${name ?? "this command"} requires ${positionalOf(name)}`;
  const missingValue = /^Not enough arguments to option (.*)\.?$/.exec(reason);
  if (missingValue !== null) return `${(missingValue[1] ?? "").replace(/\.$/, "")} needs a value`;
  return reason.replace(/\.$/, "");
}
