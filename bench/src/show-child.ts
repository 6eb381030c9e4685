import { writeSync } from "node:fs";

/**
 * The CLI as `bin/aegis.js` runs it (its one file, ADR 0045), reporting its peak resident
 * memory (KiB) on fd 3 at exit, so that a bench can show what `aegis show --path` holds.
 */
process.on("exit", () => writeSync(3, String(process.resourceUsage().maxRSS)));
await import(new URL("../../packages/cli/dist/aegis.mjs", import.meta.url).href);
