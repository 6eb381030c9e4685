import { parentPort } from "node:worker_threads";
import { describeIoError } from "../durable/io-text.js";
import { RecordReadError } from "./row-verifier.js";
import { verifyChainFile, verifyFoundChainFile } from "./verify-record.js";
import type { FileAnswer, FileRequest } from "./file-messages.js";

/**
 * A thread of `verifyRecordFiles`: verifies each file it is sent, start to end, on this
 * thread (the other threads are verifying other files), and answers with the result.
 */
const port = parentPort;
if (port === null) throw new Error("file-worker runs as a worker thread");
port.on("message", (request: FileRequest) => {
  void verifyOne(request).then((answer) => port.postMessage(answer));
});

async function verifyOne(request: FileRequest): Promise<FileAnswer> {
  try {
    const options = { threads: 0, ...(request.trust === undefined ? {} : { trust: request.trust }) };
    const verification = await (request.regularOnly ? verifyFoundChainFile(request.path, options) : verifyChainFile(request.path, options));
    return { id: request.id, result: { code: "checked", path: request.path, verification } };
  } catch (error) {
    if (error instanceof RecordReadError) return { id: request.id, result: { code: "unreadable", path: request.path, detail: describeIoError(error.cause) } };
    return { id: request.id, failure: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}
