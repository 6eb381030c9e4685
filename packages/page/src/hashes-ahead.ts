/**
 * The `line_hash` of each row, computed ahead of the walk by the page's workers (issue 31:
 * hash in the workers, link on the main thread). The walk is `@aegis/format`'s own and
 * runs unchanged on this thread; the one thing it is given from elsewhere is, for a row it
 * hashes as it is (a canonical row, SPEC §4), SHA-256 of exactly those bytes: the same
 * function over the same bytes of the same buffer, in a worker (adr/0028). A row a worker
 * has not reached yet, or whose bytes are not a range of the record given here (a row
 * split across two slices is copied), is hashed here as before, so the answer cannot change.
 */

/** What a worker answers for one span of the record: each row's place and its LineHash. */
export interface HashedSpan {
  /** Each row's offset in the record, and its length (a final `\r` left out, as the row splitter does). */
  readonly offsets: Uint32Array;
  readonly lengths: Uint32Array;
  /** The rows' LineHashes, 64 hex digits each, one after another. */
  readonly hex: string;
}

let record: ArrayBufferLike | undefined;
let taken = 0;
const known = new Map<number, { readonly length: number; readonly span: HashedSpan; readonly index: number }>();

/** Forget any record before: the rows of `buffer` will be hashed ahead. */
export function expectRecord(buffer: ArrayBufferLike): void {
  record = buffer;
  known.clear();
  taken = 0;
}

/** How many rows of the record expected now took their LineHash from a worker. */
export function takenFromWorkers(): number {
  return taken;
}

/** A worker's answer for a span of the record expected now. */
export function addHashed(buffer: ArrayBufferLike, span: HashedSpan): void {
  if (buffer !== record) return;
  for (let i = 0; i < span.offsets.length; i++) known.set(span.offsets[i] ?? 0, { length: span.lengths[i] ?? 0, span, index: i });
}

/** The LineHash a worker found for exactly these bytes of the record, if one has. Each is taken once. */
export function takeHashed(bytes: Uint8Array): string | undefined {
  if (bytes.buffer !== record) return undefined;
  const found = known.get(bytes.byteOffset);
  if (found === undefined || found.length !== bytes.byteLength) return undefined;
  known.delete(bytes.byteOffset);
  taken++;
  return found.span.hex.slice(64 * found.index, 64 * found.index + 64);
}

/** Rows go to the workers in spans of about this many bytes, whole rows each. */
const SPAN = 1 << 20;

/**
 * Start hashing the rows of `bytes` ahead of the walk: `reach(read)` (the walk has read
 * `read` bytes) sends the workers the spans up to `lookahead` bytes further; `settled()`
 * waits for every span sent. What they answer is kept for {@link takeHashed}; a worker that
 * fails costs only its span's hashes.
 */
export function hashRowsAhead(
  bytes: Uint8Array,
  hash: (base: number, bytes: Uint8Array) => Promise<HashedSpan>,
  lookahead: number,
): { readonly reach: (read: number) => void; readonly settled: () => Promise<void> } {
  const buffer = bytes.buffer;
  expectRecord(buffer);
  let posted = 0;
  const sent: Promise<void>[] = [];
  const reach = (read: number): void => {
    while (posted < bytes.length && posted < read + lookahead) {
      let end = Math.min(posted + SPAN, bytes.length);
      if (end < bytes.length) {
        const lf = bytes.indexOf(0x0a, end);
        end = lf < 0 ? bytes.length : lf + 1;
      }
      sent.push(
        hash(bytes.byteOffset + posted, bytes.subarray(posted, end)).then(
          (span) => addHashed(buffer, span),
          () => undefined,
        ),
      );
      posted = end;
    }
  };
  return { reach, settled: async () => void (await Promise.all(sent)) };
}
