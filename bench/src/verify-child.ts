import { verifyChainFile, describeVerdict } from "@aegis/format";

/**
 * Verify one file in a process of its own, so that peak RSS is the verifier's alone.
 * Prints one JSON line: the verdict, the time, and the process's peak RSS.
 */
const path = process.argv[2];
if (path === undefined) throw new Error("usage: verify-child <file>");
const started = process.hrtime.bigint();
const result = await verifyChainFile(path);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ verdict: describeVerdict(result), lines: result.lines, seconds, maxRssKiB: process.resourceUsage().maxRSS })}\n`);
