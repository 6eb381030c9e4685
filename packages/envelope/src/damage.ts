import { unmatched } from "@aegis/format/internal";
import { describeFileKind, type FileKind } from "@aegis/format/durable";
import { match } from "ts-pattern";

/**
 * Damage found in a store or pack (SPEC §14.7). None of it stops a reader: every whole
 * entry before and after it is still served. Each names the file and the byte offset.
 */
export type EnvelopeDamage =
  /** Bytes between two whole frames that are no frame: skipped, `length` bytes from `offset`. */
  | { readonly code: "damaged_frame"; readonly path: string; readonly offset: number; readonly length: number; readonly detail: string }
  /** Bytes at the end of a segment that hold no whole frame: a write cut short (SPEC §14.5). */
  | { readonly code: "torn_tail"; readonly path: string; readonly offset: number; readonly length: number; readonly cut: boolean }
  /** An index that could not be used; its segment (or pack) was scanned instead. */
  | { readonly code: "index_rebuilt"; readonly path: string; readonly detail: string }
  /** A file header that is not what its name says; its frames were still read. */
  | { readonly code: "damaged_header"; readonly path: string; readonly offset: number; readonly detail: string }
  /**
   * Segments the numbering says should exist and do not: their entries are lost. One
   * damage per run of consecutive numbers, from `path` through `through` (`count` files):
   * an empty `99999999.seg` must not make a hundred million reports.
   */
  | { readonly code: "missing_segment"; readonly path: string; readonly through: string; readonly count: number }
  /** An index the writer could not write: the next open scans its segment instead. */
  | { readonly code: "index_not_written"; readonly path: string; readonly detail: string }
  /**
   * A segment's name held a FIFO, socket, device or directory: not opened (a FIFO would block
   * the reader for ever), and its entries are lost (SPEC §14.7, §18).
   */
  | { readonly code: "not_regular_file"; readonly path: string; readonly kind: FileKind };

/**
 * One line saying what damage was found, where (file and byte offset) and what it cost,
 * for a person: `aegis` prints it on stderr after `note:` or `error:`.
 */
export function describeDamage(damage: EnvelopeDamage): string {
  return match(damage)
    .with({ code: "damaged_frame" }, (d) => `${d.path}: damaged frame at byte ${d.offset} (${d.length} bytes skipped): ${d.detail}`)
    .with({ code: "torn_tail" }, (d) => `${d.path}: torn tail at byte ${d.offset} (${d.length} bytes${d.cut ? ", cut off" : ""})`)
    .with({ code: "index_rebuilt" }, (d) => `${d.path}: index not used (${d.detail}); the frames were scanned instead`)
    .with({ code: "damaged_header" }, (d) => `${d.path}: damaged header at byte ${d.offset}: ${d.detail}`)
    .with({ code: "missing_segment" }, (d) =>
      d.count === 1
        ? `${d.path}: segment missing; its entries are lost`
        : `${d.path} through ${d.through}: ${d.count} segments missing; their entries are lost`,
    )
    .with({ code: "index_not_written" }, (d) => `${d.path}: index not written (${d.detail}); the next open scans the segment`)
    .with({ code: "not_regular_file" }, (d) => `${d.path} is not a regular file (${describeFileKind(d.kind)}): it was not read, and its entries are lost`)
    .exhaustive(unmatched);
}

/**
 * Damage that cost entries or may have (SPEC §14.7), as against bookkeeping. An index that
 * was rebuilt or not written loses nothing, because the segments are the truth; a torn tail
 * is a put that was never acknowledged (SPEC §14.5), or one a live writer is making now.
 */
export function isLoss(damage: EnvelopeDamage): boolean {
  return match(damage)
    .with({ code: "damaged_frame" }, { code: "damaged_header" }, { code: "missing_segment" }, { code: "not_regular_file" }, () => true)
    .with({ code: "torn_tail" }, { code: "index_rebuilt" }, { code: "index_not_written" }, () => false)
    .exhaustive(unmatched);
}
