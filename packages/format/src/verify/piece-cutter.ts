import { isBlank } from "../wire/text.js";
import type { Row } from "../wire/row-splitter.js";

/**
 * The calling thread's share of reading a record for the split walk (split-walk.ts): bytes
 * are read in large pieces that end at a `\n`, so that each holds whole rows and a worker
 * can split them; nothing else is looked at here. A row too long for a piece (over the row
 * bound, SPEC §13.1) is not kept: it is followed to its end, as RowSplitter does, and
 * answered as a `too_long` row unless all of it is White_Space (then it is blank).
 */

/**
 * Where the bytes come from: `read` fills the start of `into` and answers how many, 0 at the
 * end; `readAt` reads again what `read` read before, from `position` in the record.
 */
export interface ByteSource {
  read(into: Buffer): Promise<number>;
  readAt(into: Buffer, position: number): Promise<number>;
}

/** A piece of whole rows, `length` bytes at the start of `bytes`, the first at `offset` in the record. */
export interface Piece {
  readonly code: "piece";
  readonly bytes: ArrayBuffer;
  readonly length: number;
  readonly offset: number;
  /** The public key of the last `open` before the piece, as a cheap search found it (a guess). */
  readonly hint: string | undefined;
}

/** A row over the bound, numbered 0: the walk numbers it. */
export type LongRow = { readonly code: "long"; readonly row: Extract<Row, { code: "too_long" }> };

const PUBLIC_KEY = Buffer.from('"public_key":"');
const OPEN = Buffer.from('"line_type":"open"');
const KEPT_BUFFERS = 4;

export class PieceCutter {
  private carry: Buffer = Buffer.alloc(0);
  /** Offset in the record of the carry's first byte. */
  private offset = 0;
  private total = 0;
  private ended = false;
  private hint: string | undefined;
  private readonly free: ArrayBuffer[] = [];
  private readonly capacity: number;

  constructor(
    private readonly source: ByteSource,
    pieceBytes: number,
    private readonly limit: number,
    private readonly onRead: (bytes: number) => void,
  ) {
    this.capacity = pieceBytes;
  }

  /** A buffer a worker handed back, to read a later piece into. */
  give(bytes: ArrayBuffer): void {
    if (bytes.byteLength === this.capacity && this.free.length < KEPT_BUFFERS) this.free.push(bytes);
  }

  /** The next piece, or a row too long for one, or undefined at the end. */
  async next(): Promise<Piece | LongRow | undefined> {
    for (;;) {
      if (this.ended && this.carry.length === 0) return undefined;
      const kept = this.carry.length < this.capacity ? this.free.pop() : undefined;
      let bytes = kept ?? new ArrayBuffer(Math.max(this.capacity, this.carry.length + 1));
      let buffer = Buffer.from(bytes);
      let filled = this.carry.copy(buffer, 0);
      let nl = -1;
      for (;;) {
        while (filled < buffer.length && !this.ended) filled += await this.fill(buffer.subarray(filled));
        nl = filled === 0 ? -1 : buffer.lastIndexOf(0x0a, filled - 1);
        // A piece holds at least one row of the bound and its `\r\n`: a full piece without a
        // `\n` grows to that, once, so that a full buffer without one holds a row over the bound.
        if (nl >= 0 || this.ended || buffer.length >= this.limit + 2) break;
        bytes = new ArrayBuffer(Math.min(this.limit + 2, 2 * buffer.length));
        const grown = Buffer.from(bytes);
        buffer.copy(grown, 0, 0, filled);
        buffer = grown;
      }
      if (nl >= 0 || this.ended) {
        const length = nl >= 0 ? nl + 1 : filled;
        this.carry = Buffer.from(buffer.subarray(length, filled));
        const piece: Piece = { code: "piece", bytes, length, offset: this.offset, hint: this.hint };
        this.offset += length;
        this.noteKey(buffer.subarray(0, length));
        return piece;
      }
      // A full buffer and no `\n`: a row over the bound.
      const long = await this.followLongRow(buffer, filled);
      this.give(bytes);
      if (long !== undefined) return long;
    }
  }

  private async fill(into: Buffer): Promise<number> {
    const n = await this.source.read(into);
    if (n === 0) this.ended = true;
    this.total += n;
    if (n > 0) this.onRead(this.total);
    return n;
  }

  /**
   * The last `open` row, then its `public_key` within the row: a writer's `open` spells
   * both so (canonical form, SPEC §3). Searching for the longer of the two first is what
   * makes this cheap: the search skips through a piece with no `open` twice as fast.
   */
  private noteKey(piece: Buffer): void {
    const open = piece.lastIndexOf(OPEN);
    if (open < 0) return;
    const rowEnd = piece.indexOf(0x0a, open);
    const end = rowEnd < 0 ? piece.length : rowEnd;
    let at = piece.indexOf(PUBLIC_KEY, open);
    if (at < 0 || at >= end) {
      // Not after it in the row: before it, then (an `open` not in canonical order).
      at = piece.lastIndexOf(PUBLIC_KEY, open);
      if (at < 0 || piece.lastIndexOf(0x0a, open) > at) return;
    }
    if (at + PUBLIC_KEY.length + 64 <= end) this.hint = piece.toString("latin1", at + PUBLIC_KEY.length, at + PUBLIC_KEY.length + 64);
  }

  /** Read to the end of the row that fills `buffer`, keeping only whether it is blank. */
  private async followLongRow(buffer: Buffer, filled: number): Promise<LongRow | undefined> {
    const text = new TextDecoder("utf-8");
    const offset = this.offset;
    let blank = isBlank(text.decode(buffer.subarray(0, filled), { stream: true }));
    let length = filled;
    this.carry = Buffer.alloc(0);
    for (;;) {
      const n = await this.fill(buffer);
      if (n === 0) break;
      const nl = buffer.subarray(0, n).indexOf(0x0a);
      const end = nl >= 0 ? nl : n;
      if (blank) blank = isBlank(text.decode(buffer.subarray(0, end), { stream: true }));
      length += end;
      if (end < n) {
        this.carry = Buffer.from(buffer.subarray(end + 1, n));
        break;
      }
    }
    this.offset = offset + length + (this.ended ? 0 : 1);
    if (blank && isBlank(text.decode())) return undefined;
    return { code: "long", row: { code: "too_long", number: 0, offset, length, limit: this.limit } };
  }
}
