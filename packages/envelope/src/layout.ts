/**
 * The byte layout of an Envelope on disk (SPEC §14.2-§14.5): file names, magics, sizes and
 * limits. Every multi-byte integer is big-endian. Version 1 is the only version.
 */

/** The layout version written in the descriptor, every segment, index and pack (SPEC §14.2). */
export const FORMAT_VERSION = 1;

/** The file that makes a directory an Envelope store, and names its store id (SPEC §14.2). */
export const DESCRIPTOR_FILE = "aegis-envelope";
export const DESCRIPTOR_MAGIC = "AEGISENV";
export const DESCRIPTOR_BYTES = 64;

/** One writer per store (SPEC §14.6). */
export const LOCK_FILE = "writer.lock";

export const SEGMENT_MAGIC = "AEGISSEG";
export const SEGMENT_HEADER_BYTES = 32;

export const INDEX_MAGIC = "AEGISIDX";
export const INDEX_HEADER_BYTES = 64;
export const INDEX_RECORD_BYTES = 48;

/**
 * A pack (SPEC §14.9): one self-describing file holding chosen entries and tombstones, to
 * hand to someone else.
 *
 *   0   8  "AEGISPAK"
 *   8   2  version (1)
 *   10  6  zero
 *   16  16 pack id: random, the salt of the pack's frame checks and index checksum
 *   32  ... frames, as in a segment (SPEC §14.3)
 *   X   ... an index block (SPEC §14.4), segment number 0, covered = X
 *   end-16  8  X
 *   end-8   8  "AEGISEND"
 */
export const PACK_MAGIC = "AEGISPAK";
export const PACK_HEADER_BYTES = 32;
export const PACK_TRAILER_MAGIC = "AEGISEND";
export const PACK_TRAILER_BYTES = 16;

/** Every frame starts with these 4 bytes (0xAE, then "env"): what a resync searches for. */
export const FRAME_MAGIC = Buffer.from([0xae, 0x65, 0x6e, 0x76]);
/** magic (4) + head length (4) + value length (4) + check (8). */
export const FRAME_PREFIX_BYTES = 20;
/** The only encoding of an entry head, `[1, h'<32 bytes>']`, is 36 bytes long. */
export const ENTRY_HEAD_BYTES = 36;
/** A head is small: a tombstone's reason is bounded, so a larger length is damage. */
export const MAX_HEAD_BYTES = 8192;

/** The largest value a store accepts: a bound, so a damaged length never asks for 4 GiB. */
export const MAX_ENTRY_BYTES = 1 << 30;
/** A redaction reason, in UTF-8 bytes. */
export const MAX_REASON_BYTES = 4096;

/** Segments rotate once they pass this size (SPEC §14.3): a million entries, a few dozen files. */
export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

/** The random id of a store or pack: it keys every frame check (SPEC §14.3). */
export const SALT_BYTES = 16;

export function segmentFileName(segment: number): string {
  return `${segment.toString().padStart(8, "0")}.seg`;
}

export function indexFileName(segment: number): string {
  return `${segment.toString().padStart(8, "0")}.idx`;
}

/** The segment number of a file name this layout writes, or undefined for any other name. */
export function segmentNumberOf(name: string, suffix: ".seg" | ".idx"): number | undefined {
  const match = /^(\d{8})\.(seg|idx)$/.exec(name);
  if (match === null || `.${match[2] ?? ""}` !== suffix) return undefined;
  const n = Number(match[1]);
  return n >= 1 ? n : undefined;
}

/** Where an entry's value starts, given where its frame starts. */
export function valueOffsetOf(frame: number): number {
  return frame + FRAME_PREFIX_BYTES + ENTRY_HEAD_BYTES;
}

/**
 * The runs of segment numbers from 1 to the highest of `present` that are absent, in order,
 * found without visiting each absent number (the highest may be 99999999).
 */
export function missingRuns(present: Iterable<number>): { readonly first: number; readonly last: number }[] {
  const sorted = [...new Set(present)].sort((a, b) => a - b);
  const runs: { first: number; last: number }[] = [];
  let expected = 1;
  for (const n of sorted) {
    if (n > expected) runs.push({ first: expected, last: n - 1 });
    expected = n + 1;
  }
  return runs;
}
