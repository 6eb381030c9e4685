import { readFileSync } from "node:fs";

/**
 * This process's main thread's user + system CPU seconds, from /proc/self/task/<tid>/stat
 * (the main thread's task id is the process id): its own, not its worker threads'.
 */
export function mainThreadCpu(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return ticks / 100; // USER_HZ is 100 on Linux
}
