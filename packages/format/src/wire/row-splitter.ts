/**
 * Rows of a record file (SPEC §1.1, §8): the bytes between `\n`s, without a trailing `\r`,
 * skipping rows that hold only whitespace. Rows are numbered from 1 over the non-blank
 * rows, which is how the reference numbers `line N` in its reasons.
 *
 * Memory is bounded by the row limit, not by the file: a row longer than the limit is
 * reported as such and its bytes are not kept.
 */

import { isBlank } from "./text.js";

/** The longest row a verifier reads (SPEC §13.1): 1 MiB. The writer refuses longer. */
export const MAX_ROW_BYTES = 1 << 20;

export type Row =
  | { readonly code: "row"; readonly number: number; readonly offset: number; readonly bytes: Uint8Array }
  | {
      readonly code: "too_long";
      readonly number: number;
      readonly offset: number;
      readonly length: number;
      readonly limit: number;
    };

// Invalid bytes read as U+FFFD, which is not White_Space; a leading U+FEFF is content (SPEC §1.1).
const LENIENT = new TextDecoder("utf-8", { ignoreBOM: true });

function isBlankRow(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return true;
  const first = bytes[0] ?? 0;
  // Fast path: a row that starts with a printable ASCII byte other than space is not blank.
  if (first > 0x20 && first < 0x7f) return false;
  return isBlank(LENIENT.decode(bytes));
}

export class RowSplitter {
  private pieces: Uint8Array[] = [];
  private pending = 0;
  private overflow = false;
  /** While a row overflows: whether all of it so far is White_Space (then it is blank). */
  private overflowBlank = true;
  private readonly overflowText = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Absolute offset of the current chunk's first byte. */
  private base = 0;
  /** Absolute offset of the row being assembled. */
  private rowStart = 0;
  private count = 0;

  constructor(private readonly limit: number = MAX_ROW_BYTES) {}

  /**
   * Feed the next chunk; yields the rows it completes. Iterate it to the end. A yielded
   * row may share memory with `chunk`: use it before the chunk's memory is reused.
   */
  *push(chunk: Uint8Array): Generator<Row> {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        // The row continues in the next chunk. Copy what is here: the caller may reuse
        // the chunk's memory for the next read.
        if (start < chunk.length) this.keep(new Uint8Array(chunk.subarray(start)));
        break;
      }
      if (nl === start && this.pending === 0 && !this.overflow) {
        // An empty row, nothing pending: blank, and skipped without allocating (200 MB of
        // `\n` is 200 million rows).
        this.rowStart = this.base + nl + 1;
        start = nl + 1;
        continue;
      }
      // A row whole within this chunk (most rows): no copy, no list of pieces.
      const row = this.pending === 0 && !this.overflow ? this.whole(chunk.subarray(start, nl), this.rowStart) : this.keepAndTake(chunk.subarray(start, nl));
      this.rowStart = this.base + nl + 1;
      if (row !== undefined) yield row;
      start = nl + 1;
    }
    this.base += chunk.length;
  }

  /** The end of input: the last row, if it did not end with `\n`. */
  *end(): Generator<Row> {
    if (this.pending > 0 || this.overflow) {
      const row = this.take();
      if (row !== undefined) yield row;
    }
  }

  private keep(bytes: Uint8Array): void {
    this.pending += bytes.length;
    if (bytes.length === 0) return;
    if (this.overflow) {
      this.noteOverflow(bytes);
      return;
    }
    // One byte of slack for a trailing `\r`, which is not part of the row.
    if (this.pending > this.limit + 1) {
      this.overflow = true;
      this.overflowBlank = true;
      for (const piece of this.pieces) this.noteOverflow(piece);
      this.noteOverflow(bytes);
      this.pieces = [];
      return;
    }
    this.pieces.push(bytes);
  }

  /** A row too long to keep is still blank if it is all White_Space: track that, not the bytes. */
  private noteOverflow(bytes: Uint8Array): void {
    if (this.overflowBlank) this.overflowBlank = isBlank(this.overflowText.decode(bytes, { stream: true }));
  }

  private keepAndTake(bytes: Uint8Array): Row | undefined {
    this.keep(bytes);
    return this.take();
  }

  private take(): Row | undefined {
    const offset = this.rowStart;
    const length = this.pending;
    const overflow = this.overflow;
    const pieces = this.pieces;
    if (pieces.length > 0) this.pieces = [];
    this.pending = 0;
    this.overflow = false;
    if (overflow) {
      const rest = this.overflowText.decode(); // also resets the decoder for the next row
      if (this.overflowBlank && isBlank(rest)) return undefined;
      this.count++;
      return { code: "too_long", number: this.count, offset, length, limit: this.limit };
    }
    return this.whole(pieces.length === 1 && pieces[0] !== undefined ? pieces[0] : concat(pieces, length), offset);
  }

  /** A row's bytes, all of them, before its `\r` is dropped. */
  private whole(raw: Uint8Array, offset: number): Row | undefined {
    const length = raw.length;
    const bytes = length > 0 && raw[length - 1] === 0x0d ? raw.subarray(0, length - 1) : raw;
    if (bytes.length > this.limit) {
      // Within the `\r` slack but over the bound: still blank if it is all White_Space.
      if (isBlankRow(bytes)) return undefined;
      this.count++;
      return { code: "too_long", number: this.count, offset, length, limit: this.limit };
    }
    if (isBlankRow(bytes)) return undefined;
    this.count++;
    return { code: "row", number: this.count, offset, bytes };
  }
}

/** A row kept in pieces, in one array of its own. */
function concat(pieces: readonly Uint8Array[], length: number): Uint8Array {
  const whole = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}

/** `streamRows`, a chunk's rows at a time. */
export async function* streamRowChunks(
  source: AsyncIterable<Uint8Array>,
  limit: number = MAX_ROW_BYTES,
  onRead?: (bytes: number) => void,
): AsyncGenerator<readonly Row[]> {
  const splitter = new RowSplitter(limit);
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    onRead?.(total);
    yield [...splitter.push(chunk)];
  }
  yield [...splitter.end()];
}
