import type { BaseContext } from "clipanion";
import { VERSION } from "./version.js";

/**
 * What the `aegis` bin and the one-file build run. `aegis --version` is answered here, from
 * a constant, before the command line is loaded; everything else loads main.js, which loads
 * only the command the arguments name (ADR 0023). The modules this file imports are the whole
 * cost of `--version`: a test counts them, and keeps it that way.
 */
export async function launch(argv: readonly string[], context: Partial<BaseContext> = {}): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    (context.stdout ?? process.stdout).write(`${VERSION}\n`);
    return 0;
  }
  const { main } = await import("./main.js");
  return main(argv, context);
}
