import { readFileSync } from "node:fs";
import { describeVerdict, verifyRecord } from "@aegis/format";

/**
 * `verify-scale-child <file> <threads>`: verify one file in a process of its own and print one
 * JSON line: the verdict, the wall time, the calling thread's own CPU time over the
 * verification (from /proc/self/task/<tid>/stat, start-up left out), the process's CPU
 * time, and the process's peak RSS (its threads included).
 */
const [path, threadsText] = process.argv.slice(2);
if (path === undefined || threadsText === undefined) throw new Error("usage: verify-scale-child <file> <threads>");
const threads = Number(threadsText);

/** This thread's user + system CPU seconds. The main thread's task id is the process id. */
function threadCpu(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return ticks / 100; // USER_HZ is 100 on Linux
}

const cpu = process.cpuUsage();
const own = threadCpu();
const started = process.hrtime.bigint();
const result = await verifyRecord({ path }, { threads });
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const mainCpuSeconds = threadCpu() - own;
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
