import type { Definition } from "clipanion";
import { placeholderOf, withPlaceholders } from "../usage-text.js";

/** One flag of a command, as completion scripts and the manual page present it. */
export interface CommandFlag {
  /** Every spelling, long last: `["-q", "--quiet"]`. */
  readonly names: readonly string[];
  /** What it takes (`<HEX>`), or undefined for a switch. */
  readonly value: string | undefined;
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

const HELP: CommandFlag = { names: ["-h", "--help"], value: undefined, description: "Print this command's help" };

/** The commands a command line has registered (clipanion's own `--help` and `--version` left out), in registration order. */
export function commandEntries(definitions: readonly Definition[]): CommandEntry[] {
  return definitions.flatMap((d) => {
    const name = d.path.replace(/^aegis\s*/, "");
    if (name === "" || name.startsWith("-")) return [];
    const flags = d.options.map((o): CommandFlag => {
      const [spelling = "", takes] = o.definition.split(" ");
      const names = spelling.split(",");
      const long = names[names.length - 1] ?? spelling;
      return { names, value: takes === undefined ? undefined : placeholderOf(long, name), description: o.description ?? "" };
    });
    const synopsis = withPlaceholders(d.usage.replace(/^\$ /, "").split("\n")[0] ?? "", name);
    return [
      { name, synopsis, description: (d.description ?? "").trim(), details: (d.details ?? "").trim(), flags: [...flags, HELP], examples: d.examples ?? [] },
    ];
  });
}
