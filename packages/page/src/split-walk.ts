/**
 * The page's split walk (issue 31, adr/0028), the shape of `aegis verify --threads N`: the
 * workers split, parse, canonicalize and hash each row and check its signature
 * (piece-read.ts); this thread cuts the record into pieces of whole rows as it arrives, and
 * walks the answers in file order through the format's own walk, which decides everything
 * order decides: the links, the Sessions, the caps, the first failure. So the verdict is the
 * sequential walk's by construction (SPEC §8.2).
 */
import {
  ChainWalk,
  DEFAULT_SPLIT,
  MAX_ROW_BYTES,
  PieceRows,
  readPiece,
  rowBudget,
  walkPiece,
  type PieceAnswer,
  type Verification,
  type WalkOptions,
} from "@aegis/format/browser";
import type { RecordSource } from "./decode.js";

/** Where pieces are read: the page's workers (pool.ts), or, in the tests, this thread. */
export interface PieceReader {
  readonly size: number;
  /**
   * Read the whole rows in the first `length` bytes of `bytes` (handed over, and handed back
   * with the answer), `budget` of them at most, checking signatures under `hint` until an
   * `open` names another key.
   */
  read(bytes: ArrayBuffer, length: number, limit: number, hint: string | undefined, budget: number): Promise<PieceReply>;
}

/** A piece read, and the buffer it was sent in, to send another in. */
export interface PieceReply {
  readonly answer: PieceAnswer;
  readonly bytes: ArrayBuffer;
}

/** A piece sent: where it begins in the record, its length, and the workers' answer. */
interface Sent {
  readonly offset: number;
  readonly length: number;
  readonly reply: Promise<PieceReply>;
}

/**
 * Verify the record `source` brings, on `pool`'s workers. `between` is awaited after each
 * piece walked, with the bytes walked so far (the page shows it, and stays responsive).
 */
export async function splitVerify(
  source: RecordSource,
  options: WalkOptions,
  pool: PieceReader,
  between: (read: number) => Promise<void>,
  {
    limit = MAX_ROW_BYTES,
    // The CLI's numbers (adr/0027): pieces of 256 KiB to the end of a row, and a worker
    // answers no more than a row for each 64 bytes of its piece (point 7).
    pieceBytes = DEFAULT_SPLIT.pieceBytes,
    bytesPerRow = DEFAULT_SPLIT.bytesPerRow,
  }: { readonly limit?: number; readonly pieceBytes?: number; readonly bytesPerRow?: number } = {},
): Promise<{ readonly verification: Verification; readonly checkedHere: number }> {
  // The format's reader of an answer, a row at a time, and the walk's signature checker
  // (the worker's check where its key is the Session's, else one made here: adr/0028).
  const answers = new PieceRows();
  const walk = new ChainWalk(options, answers);
  const { bytes } = source;
  const window = 2 * pool.size + 1;
  const out: Sent[] = [];
  let cut = 0;
  let hint: string | undefined;
  let rows = 0;
  /** Buffers back from the workers, each `capacity` bytes: a piece and a row or two past it. */
  const free: ArrayBuffer[] = [];
  const capacity = pieceBytes + (64 << 10);
  const budget = (length: number): number => rowBudget({ ...DEFAULT_SPLIT, bytesPerRow }, length);
  const send = async (): Promise<boolean> => {
    if (cut >= bytes.length) return false;
    let there = await source.available(Math.min(cut + pieceBytes, bytes.length) - 1);
    let end = -1;
    for (let from = Math.min(cut + pieceBytes, bytes.length) - 1; end < 0;) {
      const nl = bytes.subarray(from, there).indexOf(0x0a);
      if (nl >= 0) end = from + nl + 1;
      else if (there >= bytes.length) end = bytes.length;
      else {
        from = there;
        there = await source.available(there);
      }
    }
    // Copied into a buffer a worker handed back (a new one costs more than the copy).
    const buffer = free.pop() ?? new ArrayBuffer(capacity);
    const piece = end - cut <= buffer.byteLength ? new Uint8Array(buffer) : new Uint8Array(end - cut);
    piece.set(bytes.subarray(cut, end));
    out.push({ offset: cut, length: end - cut, reply: pool.read(piece.buffer, end - cut, limit, hint, budget(end - cut)) });
    hint = lastKey(bytes.subarray(cut, end)) ?? hint;
    cut = end;
    return true;
  };
  for (;;) {
    while (out.length < window && (await send()));
    const next = out.shift();
    if (next === undefined) break;
    const reply = await next.reply;
    if (reply.bytes.byteLength === capacity) free.push(reply.bytes);
    const piece = bytes.subarray(next.offset, next.offset + next.length);
    // The worker stopped at its budget and the walk goes on: the rest of the piece is read
    // here, by the same readPiece, with no check: the walk's checker makes the checks it asks for.
    const rest = (left: Uint8Array) => readPiece(left, limit, undefined, budget(next.length));
    rows = walkPiece(walk, answers, piece, next.offset, reply.answer, rows, limit, options.onLine !== undefined, rest);
    // The first Tampered ends the walk: the rest of the record is not read.
    if (walk.done) break;
    await between(out[0]?.offset ?? cut);
  }
  // Pieces still out are left to finish on their workers; their answers are not needed.
  for (const left of out) left.reply.catch(() => undefined);
  return { verification: walk.finish(), checkedHere: answers.madeHere };
}

/** `"public_key":"`, and where its `k` is in it: a byte that is rare in a record, and that the search looks for. */
const PUBLIC_KEY = Uint8Array.from('"public_key":"', (c) => c.charCodeAt(0));
const K_AT = 8;

/**
 * The public key of the last `open` in `piece`, as a cheap search finds it: a guess for the
 * worker of the next piece (a wrong one costs a check on this thread, never the answer).
 * The search runs back from the end over the `k`s (the browser's own loop), most of which
 * are `key_id`'s.
 */
function lastKey(piece: Uint8Array): string | undefined {
  for (let k = piece.lastIndexOf(0x6b); k >= K_AT; k = piece.lastIndexOf(0x6b, k - 1)) {
    const start = k - K_AT;
    const end = start + PUBLIC_KEY.length;
    if (end + 64 > piece.length || !PUBLIC_KEY.every((b, i) => piece[start + i] === b)) continue;
    return String.fromCharCode(...piece.subarray(end, end + 64));
  }
  return undefined;
}
