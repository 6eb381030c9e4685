import { Command } from "clipanion";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { commandEntries } from "../reference/command-list.js";
import { manPage } from "../reference/man-page.js";
import { VERSION } from "../version.js";

export class ManCommand extends AegisCommand {
  static override paths = [["man"]];

  static override usage = Command.Usage({
    description: "Print aegis's manual page, aegis(1), in roff (also: aegis help --man)",
    details: `
      Prints the manual page made from the same definitions as \`--help\`: every command, its flags and examples. The packed \`@aegis/cli\` carries it as \`man/aegis.1\`, which \`npm install --global\` puts where \`man aegis\` finds it.
    `,
    examples: [
      ["Read it", "aegis help --man | man -l -"],
      ["Install it for this user", "aegis man > ~/.local/share/man/man1/aegis.1"],
    ],
  });

  protected async run(): Promise<ExitCode> {
    await this.out(manPage(commandEntries(this.cli.definitions()), VERSION));
    return 0;
  }
}
