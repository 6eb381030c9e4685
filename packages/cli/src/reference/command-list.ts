import type { Definition } from "clipanion";
import { choicesOf, placeholderOf, withPlaceholders } from "../usage-text.js";

/** One flag of a command, as completion scripts and the manual page present it. */
export interface CommandFlag {
  /** Every spelling, long last: `["-q", "--quiet"]`. */
  readonly names: readonly string[];
  /** What it takes (`<HEX>`), or undefined for a switch. */
  readonly value: string | undefined;
  /** What a shell should offer for its value: file names, directory names, one of a few words, or nothing it can know. */
  readonly completes: "file" | "directory" | "choice" | "nothing";
  /** The words its value is one of, when `completes` is `choice`. */
  readonly choices: readonly string[];
  /** Given more than once, each counts (its help says "repeatable"). */
  readonly repeatable: boolean;
  readonly description: string;
}

/** One command as its `--help` describes it: the source of the completion scripts and the manual page. */
export interface CommandEntry {
  /** As typed after `aegis`: `verify`, `envelope get`. */
  readonly name: string;
  /** The usage line, without `$ `: `aegis verify [--key <HEX>] ... <PATH>`. */
  readonly synopsis: string;
  readonly description: string;
  /** Paragraphs, as `--help` prints them. */
  readonly details: string;
  readonly flags: readonly CommandFlag[];
  readonly examples: readonly (readonly [label: string, command: string])[];
}

const HELP: CommandFlag = {
  names: ["-h", "--help"],
  value: undefined,
  completes: "nothing",
  choices: [],
  repeatable: false,
  description: "Print this command's help",
};

/** The values that name a file, and those that name a directory; any other value is typed. */
const FILE_VALUES: ReadonlySet<string> = new Set(["<PATH>", "<FILE>", "<YAML>", "<DIR|PACK>"]);
const DIRECTORY_VALUES: ReadonlySet<string> = new Set(["<DIR>"]);

/** The commands a command line has registered (clipanion's own `--help` and `--version` left out), in registration order. */
export function commandEntries(definitions: readonly Definition[]): CommandEntry[] {
  return definitions.flatMap((d) => {
    const name = d.path.replace(/^aegis\s*/, "");
    if (name === "" || name.startsWith("-")) return [];
    const flags = d.options.map((o): CommandFlag => {
      const [spelling = "", takes] = o.definition.split(" ");
      const names = spelling.split(",");
      const long = names[names.length - 1] ?? spelling;
      const value = takes === undefined ? undefined : placeholderOf(long, name);
      const choices = (value === undefined ? undefined : choicesOf(long, name)) ?? [];
      const completes =
        value === undefined
          ? "nothing"
          : choices.length > 0
            ? "choice"
            : FILE_VALUES.has(value)
              ? "file"
              : DIRECTORY_VALUES.has(value)
                ? "directory"
                : "nothing";
      const description = o.description ?? "";
      return { names, value, completes, choices, repeatable: description.includes("(repeatable)"), description };
    });
    const synopsis = withPlaceholders(d.usage.replace(/^\$ /, "").split("\n")[0] ?? "", name);
    return [
      { name, synopsis, description: (d.description ?? "").trim(), details: (d.details ?? "").trim(), flags: [...flags, HELP], examples: d.examples ?? [] },
    ];
  });
}
