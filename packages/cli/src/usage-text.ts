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
  "--current-tools": "<FILE>",
  "--witness": "<KEY>",
  "--min-witnesses": "<N>",
  "--origin": "<TEXT>",
  "--size": "<N>",
  "--line": "<N>",
  "--threads": "<N>",
  "--format": "<FORMAT>",
  "--path": "<PATH>",
  "--host": "<HOST[:PORT]>",
  "--before": "<UTC-DATE>",
  "--record": "<PATH>",
  "--listen": "<HOST:PORT>",
  "--name": "<NAME>",
  "--log": "<ORIGIN=KEY>",
  "--state": "<DIR>",
  "--allow-read": "<PATH>",
  "--allow-write": "<PATH>",
  "--allow-net": "<HOST:PORT>",
  "--url": "<URL>",
  "--header": "<NAME:VALUE>",
  "--header-env": "<NAME:VAR>",
  "--listen-token-env": "<VAR>",
  "--refusal": "<STYLE>",
};

/** Where one command's option takes a narrower value than {@link PLACEHOLDERS} says. */
const COMMAND_PLACEHOLDERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // Only redaction, and the store wrap writes, are limited to a store directory; every other --envelope also takes a pack.
  "envelope redact": { "--envelope": "<DIR>" },
  "envelope expire": { "--envelope": "<DIR>" },
  wrap: { "--envelope": "<DIR>", "--witness": "<VKEY@URL>" },
  checkpoint: { "--witness": "<VKEY@URL>" },
  "witness serve": { "--key": "<FILE>" },
};

/** `export --format`: how the spans leave. */
export const EXPORT_FORMATS = ["otlp", "otlp-json"] as const;
/** `wrap --refusal`: the two answers SPEC §17.3 names. */
export const REFUSAL_STYLES = ["tool-result", "reference"] as const;

/** The options whose value is one of a few words, by command: what a completion script offers. */
const CHOICES: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  export: { "--format": EXPORT_FORMATS },
  wrap: { "--refusal": REFUSAL_STYLES },
};

/** The words an option of `command` takes, when it takes one of a few; undefined when any value goes. */
export function choicesOf(option: string, command: string): readonly string[] | undefined {
  return CHOICES[command]?.[option];
}

/** The value an option of `command` takes, as its help names it (`--key` of verify: `<HEX>`). */
export function placeholderOf(option: string, command: string | undefined): string {
  const own = command === undefined ? undefined : COMMAND_PLACEHOLDERS[command];
  return own?.[option] ?? PLACEHOLDERS[option] ?? "<VALUE>";
}

/** A usage line with each `--option #0` spelled `--option <VALUE>`, as `--help` prints it. */
export function withPlaceholders(line: string, command: string | undefined): string {
  return line.replace(/(--[a-z-]+) #0/g, (_whole, name: string) => `${name} ${placeholderOf(name, command)}`).replace(/<(--[a-z-]+ <[^<>\s]+>)>/g, "$1");
}
