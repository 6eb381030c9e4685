import { isMainThread } from "node:worker_threads";
import { launch } from "./launch.js";

/**
 * The entry of the one-file build, dist/aegis.mjs (scripts/bundle.mjs, ADR 0023): the CLI on
 * the main thread; on a thread the verifier started from this same file, that worker.
 * Everything past launch.js is imported when it is needed, so the file's start-up is the
 * scanning of it, and a command's code runs only when the command does. No top-level await:
 * the one file runs each chunk as a CommonJS function, where there is none.
 */
if (isMainThread) {
  void launch(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
} else {
  void import("@aegis/format/internal")
    .then(({ runWorkerThread }) => runWorkerThread())
    .then((ran) => {
      if (!ran) throw new Error("aegis.mjs started on a thread that is none of its workers");
    });
}
