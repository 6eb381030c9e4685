import { describeVerdict, verifyRecord } from "@aegis/format";

/**
 * Verify one file in a process of its own, so that peak RSS is the verifier's alone (its
 * threads included). `verify-child <file> [threads]`. Prints one JSON line: the verdict,
 * the time, the process's CPU time and its peak RSS.
 */
const [path, threadsText] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: verify-child <file> [threads]");
const threads = threadsText === undefined ? undefined : Number(threadsText);
const cpu = process.cpuUsage();
const started = process.hrtime.bigint();
const result = await verifyRecord({ path }, threads === undefined ? {} : { threads });
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({ verdict: describeVerdict(result), lines: result.lines, seconds, cpuSeconds: (used.user + used.system) / 1e6, maxRssKiB: process.resourceUsage().maxRSS })}\n`,
);
