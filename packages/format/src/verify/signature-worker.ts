import { parentPort } from "node:worker_threads";
import { verifyStrict, verifyingKey, type VerifyingKey } from "../crypto/ed25519.js";
import { checksOf, type EncodedBatch } from "./signature-batch.js";

/**
 * A thread of the signature pool (signature-pool.ts): it checks each batch it is sent, in
 * order, and answers with the index of the first check that fails, or -1.
 */
export interface BatchRequest {
  readonly id: number;
  readonly batch: EncodedBatch;
}

export interface BatchAnswer {
  readonly id: number;
  readonly failed: number;
}

// A file may open many Sessions under as many keys; decoding one costs a square root.
const MAX_KEYS = 1024;
const keys = new Map<string, VerifyingKey | undefined>();

function keyOf(hex: string): VerifyingKey | undefined {
  if (keys.has(hex)) return keys.get(hex);
  if (keys.size >= MAX_KEYS) keys.clear();
  const decoded = verifyingKey(Buffer.from(hex, "hex"));
  const key = typeof decoded === "string" ? undefined : decoded;
  keys.set(hex, key);
  return key;
}

function firstFailure(batch: EncodedBatch): number {
  let index = 0;
  for (const check of checksOf(batch)) {
    // The walk sends only keys it decoded; one that does not decode here fails, never passes.
    const key = keyOf(check.key);
    if (key === undefined || !verifyStrict(key, check.message, check.signature)) return index;
    index++;
  }
  return -1;
}

const port = parentPort;
if (port === null) throw new Error("signature-worker runs as a worker thread");
port.on("message", (request: BatchRequest) => {
  const answer: BatchAnswer = { id: request.id, failed: firstFailure(request.batch) };
  port.postMessage(answer);
});
