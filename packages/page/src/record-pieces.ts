/**
 * The page's record as pieces for the format's split walk (`walkPieces`, the one piece driver
 * `aegis verify --threads N` uses too; adr/0028): pieces of whole rows cut from the record
 * as it arrives, each copied into a buffer a worker handed back, with a guess of the
 * Session's key for the worker that reads it.
 */
import {
  DEFAULT_SPLIT,
  MAX_ROW_BYTES,
  walkPieces,
  type Piece,
  type PieceReader,
  type PieceSource,
  type Verification,
  type WalkOptions,
} from "@aegis/format/browser";
import type { RecordSource } from "./decode.js";

/** The reply of a piece reader: the rows read, and the buffer back. */
export type PieceReply = Awaited<ReturnType<PieceReader["read"]>>;

/** How the page cuts a record: the CLI's numbers by default (adr/0027). */
export interface PieceTuning {
  readonly limit?: number;
  readonly pieceBytes?: number;
  readonly bytesPerRow?: number;
}

/**
 * Verify the record `source` brings, its pieces read by `reader` (the page's workers). `between`
 * is awaited after each piece walked, with the bytes walked so far (the page shows it, and
 * stays responsive).
 */
export async function splitVerify(
  source: RecordSource,
  options: WalkOptions,
  reader: PieceReader,
  between: (walked: number) => Promise<void>,
  { limit = MAX_ROW_BYTES, pieceBytes = DEFAULT_SPLIT.pieceBytes, bytesPerRow = DEFAULT_SPLIT.bytesPerRow }: PieceTuning = {},
): Promise<{ readonly verification: Verification; readonly checkedHere: number }> {
  const tuning = { ...DEFAULT_SPLIT, pieceBytes, bytesPerRow };
  return walkPieces({ source: new RecordPieces(source, pieceBytes), reader, name: "record", limit, tuning, between }, options);
}

class RecordPieces implements PieceSource {
  private cut = 0;
  private hint: string | undefined;
  /** Buffers back from the workers, each `capacity` bytes: a piece and a row or two past it. */
  private readonly free: ArrayBuffer[] = [];
  private readonly capacity: number;

  constructor(
    private readonly source: RecordSource,
    private readonly pieceBytes: number,
  ) {
    this.capacity = pieceBytes + (64 << 10);
  }

  async next(): Promise<Piece | undefined> {
    const { bytes } = this.source;
    const cut = this.cut;
    if (cut >= bytes.length) return undefined;
    let there = await this.source.available(Math.min(cut + this.pieceBytes, bytes.length) - 1);
    let end = -1;
    for (let from = Math.min(cut + this.pieceBytes, bytes.length) - 1; end < 0;) {
      const nl = bytes.subarray(from, there).indexOf(0x0a);
      if (nl >= 0) end = from + nl + 1;
      else if (there >= bytes.length) end = bytes.length;
      else {
        from = there;
        there = await this.source.available(there);
      }
    }
    // Copied into a buffer a worker handed back (a new one costs more than the copy).
    const kept = this.free.pop();
    const buffer = kept !== undefined && end - cut <= kept.byteLength ? kept : new ArrayBuffer(Math.max(this.capacity, end - cut));
    new Uint8Array(buffer).set(bytes.subarray(cut, end));
    const piece: Piece = { code: "piece", bytes: buffer, length: end - cut, offset: cut, hint: this.hint };
    this.hint = lastKey(bytes.subarray(cut, end)) ?? this.hint;
    this.cut = end;
    return piece;
  }

  give(bytes: ArrayBuffer): void {
    if (bytes.byteLength === this.capacity) this.free.push(bytes);
  }

  reread(piece: Piece): Promise<ArrayBuffer> {
    return Promise.resolve(this.source.bytes.slice(piece.offset, piece.offset + piece.length).buffer);
  }
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
