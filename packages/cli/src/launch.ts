import type { BaseContext } from "clipanion";
import { VERSION } from "./version.js";

/**
 * What the one-file build runs, and what the bin asks first. `aegis --version` is answered
 * here, from a constant, before the command line is loaded; everything else loads main.js,
 * which loads only the command the arguments name (ADR 0023). The modules this file imports
 * are the whole cost of `--version`: a test counts them, and keeps it that way.
 */
export async function launch(argv: readonly string[], context: Partial<BaseContext> = {}): Promise<number> {
  if (printsVersion(argv, context.stdout ?? process.stdout)) return 0;
  const { main } = await import("./main.js");
  return main(argv, context);
}

/**
 * True, once the version is written, when the arguments ask for it (`--version`, `-v`); the
 * bin then loads no more (ADR 0045: anything else, it runs the one file).
 */
export function printsVersion(argv: readonly string[], stdout: NodeJS.WritableStream = process.stdout): boolean {
  if (argv.length !== 1 || (argv[0] !== "--version" && argv[0] !== "-v")) return false;
  stdout.write(`${VERSION}\n`);
  return true;
}
