import { writeSync } from "node:fs";

/**
 * The CLI as `bin/aegis.js` runs it, reporting its peak resident memory (KiB) on fd 3 at
 * exit, so that a bench can show what `aegis show --path` holds. The built CLI is loaded by
 * path: the bench depends on no CLI types.
 */
const { main } = (await import(new URL("../../packages/cli/dist/main.js", import.meta.url).href)) as {
  main: (argv: readonly string[]) => Promise<number>;
};
process.on("exit", () => writeSync(3, String(process.resourceUsage().maxRSS)));
process.exitCode = await main(process.argv.slice(2));
