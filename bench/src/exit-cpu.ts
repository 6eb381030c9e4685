import { writeFileSync } from "node:fs";
import { mainThreadCpu } from "./thread-cpu.js";

/**
 * `node --import bench/dist/exit-cpu.js <script> ...`: at exit, writes the main thread's CPU
 * seconds, start-up included, to the file AEGIS_BENCH_CPU_FILE names. So a bench can read
 * what `aegis verify`'s own calling thread spent, the CLI unchanged.
 */
const file = process.env["AEGIS_BENCH_CPU_FILE"];
if (file !== undefined && file !== "") process.on("exit", () => writeFileSync(file, `${mainThreadCpu()}\n`));
