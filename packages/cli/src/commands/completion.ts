import { Command, Option } from "clipanion";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { commandEntries } from "../reference/command-list.js";
import { SHELLS, completionScript, isShell } from "../reference/completion.js";

export class CompletionCommand extends AegisCommand {
  static override paths = [["completion"]];

  static override usage = Command.Usage({
    description: "Print a shell completion script for aegis (bash, zsh or fish)",
    details: `
      Prints a script that completes aegis's commands (after \`aegis help\` too), each command's flags, the words a flag takes when it takes one of a few (\`--format\`, \`--refusal\`), and file names where a command takes a file. It is made from the same definitions as \`--help\`, so it knows every command and flag of this aegis.
    `,
    examples: [
      ["Complete in this bash", "source <(aegis completion bash)"],
      ["Complete in every bash", "aegis completion bash > ~/.local/share/bash-completion/completions/aegis"],
      ["Complete in zsh", "aegis completion zsh > ~/.zfunc/_aegis   # with fpath+=(~/.zfunc) before compinit"],
      ["Complete in fish", "aegis completion fish > ~/.config/fish/completions/aegis.fish"],
    ],
  });

  shell = Option.String({ name: "bash|zsh|fish" });

  protected async run(): Promise<ExitCode> {
    if (!isShell(this.shell))
      throw new CliError({ code: "usage", command: "completion", message: `unknown shell ${JSON.stringify(this.shell)}: give one of ${SHELLS.join(", ")}` });
    await this.out(completionScript(this.shell, commandEntries(this.cli.definitions())));
    return 0;
  }
}
