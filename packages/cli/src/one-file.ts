import { isMainThread } from "node:worker_threads";
import { launch } from "./launch.js";

/**
 * The entry of the one-file build, dist/aegis.mjs (scripts/bundle.mjs, ADR 0023): the CLI on
 * the main thread; on a thread the verifier started from this same file, that worker.
 * Everything past launch.js is imported when it is needed, so the file's start-up is the
 * parsing of it, and a command's code runs only when the command does.
 */
if (isMainThread) {
  process.exitCode = await launch(process.argv.slice(2));
} else {
  const { runWorkerThread } = await import("@aegis/format/internal");
  if (!(await runWorkerThread())) throw new Error("aegis.mjs started on a thread that is none of its workers");
}
