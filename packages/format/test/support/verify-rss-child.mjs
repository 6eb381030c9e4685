// Verify one record in a process of its own and print its verdict, the row threads this
// process may start, and its peak RSS: memory measured by the kernel, the threads included.
// `verify-rss-child.mjs <record> <threads>`; runs the built package (npm run build).
import { availableParallelism } from "node:os";
import { describeVerdict, verifyRecord } from "../../dist/index.js";

const [path, threads] = process.argv.slice(2);
const result = await verifyRecord({ path }, { threads: Number(threads) });
process.stdout.write(
  `${JSON.stringify({ verdict: describeVerdict(result), started: Math.min(Number(threads), availableParallelism()), maxRssKiB: process.resourceUsage().maxRSS })}\n`,
);
