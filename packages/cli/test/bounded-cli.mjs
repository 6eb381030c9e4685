// The CLI as `bin/aegis.js` runs it (its one file, ADR 0045), reporting its peak resident
// memory (KiB) on fd 3 at exit, so that a test can bound what a hostile input costs.
import { writeSync } from "node:fs";

process.on("exit", () => writeSync(3, String(process.resourceUsage().maxRSS)));
await import("../dist/aegis.mjs");
