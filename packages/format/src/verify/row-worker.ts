import { parentPort } from "node:worker_threads";
import type { PieceAnswer } from "./piece-answer.js";
import { readPiece } from "./row-work.js";
import { checkNow } from "./signature-checker.js";

/**
 * A thread of the row pool (row-pool.ts): it reads each piece it is sent (row-work.ts) and
 * answers with the rows read, handing the piece's buffer back for the calling thread to
 * read the next piece into (and to read a row again, should a guess of key be wrong).
 */
export interface PieceRequest {
  readonly id: number;
  readonly bytes: ArrayBuffer;
  readonly length: number;
  readonly limit: number;
  readonly hint: string | undefined;
  /** Rows to read at most (row-work.ts): the rest of the piece is the calling thread's. */
  readonly budget: number;
}

export interface PieceReply {
  readonly id: number;
  readonly bytes: ArrayBuffer;
  readonly answer: PieceAnswer;
}

const port = parentPort;
if (port === null) throw new Error("row-worker runs as a worker thread");
port.on("message", (request: PieceRequest) => {
  const answer = readPiece(new Uint8Array(request.bytes, 0, request.length), request.limit, request.hint, request.budget, checkNow);
  const reply: PieceReply = { id: request.id, bytes: request.bytes, answer };
  port.postMessage(reply, [request.bytes, answer.rows.buffer, answer.numbers.buffer]);
});
