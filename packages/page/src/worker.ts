/**
 * A worker of the page: reads pieces of the record (parse, canonical form, `line_hash`,
 * signature check: piece-read.ts) for the walk on the main thread, and checks batches of
 * signatures the format's own walk sends it (`#walk=sequential`, and the tests).
 */
import { checksOf, type EncodedBatch } from "@aegis/format/browser";
import { readPiece } from "./piece-read.js";
import { checkOne, chooseBackend } from "./signature-check.js";
import type { Backend, WorkerAnswer, WorkerRequest } from "./signature-messages.js";

interface WorkerScope {
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerAnswer, transfer?: Transferable[]): void;
}
declare const self: WorkerScope;

/**
 * Every request waits for the hello that chose the back end, and no more: a piece waiting on
 * WebCrypto's answers does not hold up the parsing of the next.
 */
let ready: Promise<void> = Promise.resolve();

self.onmessage = (event) => {
  const request = event.data;
  if (request.code === "hello") {
    ready = ready.then(() => hello(request.backend));
    return;
  }
  void ready.then(() => {
    switch (request.code) {
      case "batch":
        return answer(request.id, request.batch);
      case "check":
        return checkAlone(request.id, request.key, request.message, request.signature);
      case "piece":
        return piece(request.id, request.bytes, request.length, request.limit, request.hint, request.budget);
    }
  });
};

async function hello(wanted: Backend | "auto"): Promise<void> {
  self.postMessage({ code: "ready", backend: await chooseBackend(wanted) });
}

async function piece(id: number, bytes: ArrayBuffer, length: number, limit: number, hint: string | undefined, budget: number): Promise<void> {
  try {
    const answer = await readPiece(new Uint8Array(bytes, 0, length), limit, hint, checkOne, budget);
    self.postMessage({ code: "read", id, answer, bytes }, [answer.rows.buffer, answer.numbers.buffer, bytes]);
  } catch (error) {
    self.postMessage({ code: "failed", id, message: error instanceof Error ? error.message : String(error) });
  }
}

async function checkAlone(id: number, key: string, message: Uint8Array, signature: Uint8Array): Promise<void> {
  const valid = /^(?:[0-9a-f]{2})*$/.test(key) && (await checkOne(key, message, signature));
  self.postMessage({ code: "valid", id, valid });
}

async function answer(id: number, batch: EncodedBatch): Promise<void> {
  try {
    self.postMessage({ code: "checked", id, failed: await firstFailure(batch) });
  } catch (error) {
    self.postMessage({ code: "failed", id, message: error instanceof Error ? error.message : String(error) });
  }
}

async function firstFailure(batch: EncodedBatch): Promise<number> {
  const results: (boolean | Promise<boolean>)[] = [];
  for (const check of checksOf(batch)) results.push(checkOne(check.key, check.message, check.signature));
  for (let i = 0; i < results.length; i++) if (!(await results[i])) return i;
  return -1;
}
