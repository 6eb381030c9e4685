import { workerData } from "node:worker_threads";
import type { WorkerData } from "./worker-url.js";

/**
 * In a thread `startWorker` started from one file, run the worker it names and answer
 * true; anywhere else, do nothing and answer false. The one-file build's entry calls it.
 */
export async function runWorkerThread(): Promise<boolean> {
  const name = isWorkerData(workerData) ? workerData.aegis_worker : undefined;
  if (name === "signature") await import("./signature-worker.js");
  else if (name === "file") await import("./file-worker.js");
  else if (name === "row") await import("./row-worker.js");
  return name !== undefined;
}

function isWorkerData(data: unknown): data is WorkerData {
  return (
    typeof data === "object" &&
    data !== null &&
    "aegis_worker" in data &&
    (data.aegis_worker === "signature" || data.aegis_worker === "file" || data.aegis_worker === "row")
  );
}
