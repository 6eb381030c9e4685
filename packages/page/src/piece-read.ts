/**
 * The order-free half of the walk, in a worker of the page (issue 31; SPEC §8.2 frees the
 * order of the work, not of the answer): a piece of the record is read by the format's own
 * reader of a piece (`readPieceLater`, the one `aegis verify`'s row threads run: split, parse,
 * canonical form, `line_hash`, the claim of each signature) into the format's answer. What is
 * the page's own is here: the curve check, WebCrypto's where it may answer later, and rows
 * decoded as slices of their piece's text (piece-text.ts). The main thread walks the answers
 * in file order through the format's own walk (`walkPieces`, through record-pieces.ts; adr/0028).
 */
import { fromCheckedHex, readPieceLater, type PieceAnswer, type PieceCheck } from "@aegis/format/browser";
import { readingPiece } from "./piece-text.js";

/** Checks one signature: by the strict rule of SPEC §8.5, now or later. */
export type CheckOne = (keyHex: string, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean>;

const UTF8 = new TextEncoder();

/**
 * Read the rows of `piece` (whole rows, the last one perhaps without its `\n`), `budget` of
 * them at most: the answer says where the rest starts (`readTo`). `hint` is the public key
 * of the last `open` before the piece, as the main thread found it: a wrong guess costs the
 * main thread a check of its own, never the answer.
 */
export function readPiece(piece: Uint8Array, limit: number, hint: string | undefined, check: CheckOne, budget: number): Promise<PieceAnswer> {
  const curve: PieceCheck<boolean | Promise<boolean>> = (claim, input) => {
    const message = input.row !== undefined && input.cut !== undefined ? cut(input.row, input.cut.start, input.cut.end) : encoded(input.text());
    return check(claim.key.hex, message, fromCheckedHex(claim.signature));
  };
  // Rows are decoded as slices of the piece's text, when it is all ASCII (piece-text.ts):
  // every row is read before readPieceLater returns, only its checks answer later.
  readingPiece(piece);
  try {
    return readPieceLater(piece, limit, hint, budget, curve);
  } finally {
    readingPiece(undefined);
  }
}

/**
 * Messages are written into one buffer, used again for the next (the check reads its
 * message before it returns): a piece's checks allocate no memory of their own, which
 * otherwise kept the worker's garbage collector busy with a few hundred buffers a piece.
 */
let scratch = new Uint8Array(1 << 16);

function room(length: number): Uint8Array {
  if (length > scratch.length) scratch = new Uint8Array(Math.max(length, 2 * scratch.length));
  return scratch;
}

/** The row less its bytes [start, end): the signing input of a canonical row (SPEC §4). */
function cut(row: Uint8Array, start: number, end: number): Uint8Array {
  const length = row.length - (end - start);
  const message = room(length);
  message.set(row.subarray(0, start));
  message.set(row.subarray(end), start);
  return message.subarray(0, length);
}

/** A signing input given as text, as UTF-8. */
function encoded(text: string): Uint8Array {
  const message = room(3 * text.length);
  return message.subarray(0, UTF8.encodeInto(text, message).written);
}
