// The CLI as `bin/aegis.js` runs it, reporting its peak resident memory (KiB) on fd 3 at exit,
// so that a test can bound what a hostile input costs.
import { writeSync } from "node:fs";
import { main } from "../dist/main.js";

process.on("exit", () => writeSync(3, String(process.resourceUsage().maxRSS)));
process.exitCode = await main(process.argv.slice(2));
