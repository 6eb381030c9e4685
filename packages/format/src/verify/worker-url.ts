import { Worker, type WorkerOptions } from "node:worker_threads";

/** The verifier's worker threads: the signature pool's (signature-worker.ts), the row pool's (row-worker.ts) and verifyRecordFiles' (file-worker.ts). */
export type VerifyWorker = "signature" | "file" | "row";

/** What a thread started by {@link startWorker} is told: which worker it is. */
export interface WorkerData {
  readonly aegis_worker: VerifyWorker;
}

/**
 * Start one of the verifier's worker threads. Built as packages, the worker is the compiled
 * module beside this one (tests run this module from its TypeScript source, the workers from
 * dist/). Built into one file (dist/aegis.mjs, ADR 0023), this module's URL is that file's:
 * the thread starts that same file, whose entry hands it to {@link runWorkerThread}.
 */
export function startWorker(name: VerifyWorker, options: Pick<WorkerOptions, "resourceLimits"> = {}): Worker {
  const data: WorkerData = { aegis_worker: name };
  return new Worker(workerUrl(`./${name}-worker.js`), { ...options, workerData: data });
}

function workerUrl(file: string): URL {
  const self = import.meta.url;
  if (self.endsWith("/verify/worker-url.js")) return new URL(file, self);
  if (self.endsWith("/verify/worker-url.ts")) return new URL(new URL(file, self).href.replace("/src/verify/", "/dist/verify/"));
  return new URL(self);
}
