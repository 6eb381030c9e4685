import { describeVerdict, verifyRecord } from "@aegis/format";
import { mainThreadCpu } from "./thread-cpu.js";

/**
 * `verify-scale-child <file> <threads>`: verify one file in a process of its own and print one
 * JSON line: the verdict, the wall time, the calling thread's own CPU time over the
 * verification (from /proc/self/task/<tid>/stat, start-up left out), the process's CPU
 * time, and the process's peak RSS (its threads included).
 */
const [path, threadsText] = process.argv.slice(2);
if (path === undefined || threadsText === undefined) throw new Error("usage: verify-scale-child <file> <threads>");
const threads = Number(threadsText);

const cpu = process.cpuUsage();
const own = mainThreadCpu();
const started = process.hrtime.bigint();
const result = await verifyRecord({ path }, { threads });
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const mainCpuSeconds = mainThreadCpu() - own;
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({
    verdict: describeVerdict(result),
    lines: result.lines,
    seconds,
    mainCpuSeconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    maxRssKiB: process.resourceUsage().maxRSS,
  })}\n`,
);
