import type { CommandEntry } from "./command-list.js";

/**
 * aegis(1) in roff (man(7) macros), made from the commands' own definitions, the same text
 * `--help` prints: `aegis help --man | man -l -`, and packed as man/aegis.1.
 */
export function manPage(commands: readonly CommandEntry[], version: string): string {
  const out: string[] = [
    `.TH AEGIS 1 "" "aegis ${roff(version)}" "User Commands"`,
    ".SH NAME",
    "aegis \\- provable records of what an AI agent did",
    ".SH SYNOPSIS",
    ...commands.flatMap((c) => [".PP", `\\fBaegis ${roff(c.name)}\\fR ${synopsisRest(c)}`]),
    ".SH DESCRIPTION",
    roff(
      "aegis records every tool call an agent makes as a Line in an append-only, hash-chained record file, signed with Ed25519, " +
        "and checks such records: whether one is whole, unaltered and signed, and what a Policy Set decides about each recorded call.",
    ),
    ".PP",
    roff("Errors a user can cause print an error: line and a help: line on stderr. Each command's exit codes are given below."),
    ".SH COMMANDS",
  ];
  for (const c of commands) {
    out.push(`.SS "aegis ${roff(c.name)}"`, roff(c.description));
    for (const paragraph of c.details.split(/\n\s*\n/)) out.push(".PP", roff(paragraph.replace(/\s*\n\s*/g, " ").trim()));
    out.push(".PP", "Options:", ".RS");
    for (const f of c.flags) {
      const value = f.value === undefined ? "" : ` \\fI${roff(f.value)}\\fR`;
      out.push(".TP", `\\fB${f.names.map(roff).join("\\fR, \\fB")}\\fR${value}`, roff(f.description));
    }
    out.push(".RE");
    if (c.examples.length > 0) {
      out.push(".PP", "Examples:", ".RS");
      for (const [label, command] of c.examples) out.push(".PP", roff(label), ".RS", ".nf", roff(command), ".fi", ".RE");
      out.push(".RE");
    }
  }
  out.push(
    ".SH SEE ALSO",
    roff(
      "SPEC.md (the record format, normative), docs/commands.md (every command, with its --help), README.md; " +
        "aegis COMMAND --help prints one command's help.",
    ),
  );
  return `${out.join("\n")}\n`;
}

/** What follows the command's name in its synopsis: `[options]` where it has any beyond --help, then its operands. */
function synopsisRest(command: CommandEntry): string {
  const operands = command.synopsis.slice(`aegis ${command.name}`.length).trim();
  const options = command.flags.some((f) => !f.names.includes("--help")) ? "[\\fIoptions\\fR] " : "";
  return `${options}${roff(operands)}`.trim();
}

/** Text for a roff line: a backslash escaped, a leading dot or quote kept as text, `code` in bold, hyphens as minus signs. */
function roff(text: string): string {
  const escaped = text
    .replace(/\\/g, "\\e")
    .replace(/-/g, "\\-")
    .replace(/`([^`]+)`/g, "\\fB$1\\fR");
  // On every line: a line of the text that began with a dot or a quote would be read as a request.
  return escaped.replace(/^(?=[.'])/gm, "\\&");
}
