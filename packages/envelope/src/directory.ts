import { readdir, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { Catalog } from "./catalog.js";
import type { EnvelopeDamage } from "./damage.js";
import { segmentHeaderFault, readDescriptor } from "./descriptor.js";
import { io, ioError } from "./errors.js";
import { readHead, readPrefix } from "./frame.js";
import { decodeIndex, type IndexRecord } from "./index-file.js";
import {
  ENTRY_HEAD_BYTES,
  FRAME_PREFIX_BYTES,
  INDEX_HEADER_BYTES,
  INDEX_RECORD_BYTES,
  SEGMENT_HEADER_BYTES,
  indexFileName,
  missingRuns,
  segmentFileName,
  segmentNumberOf,
} from "./layout.js";
import { InputFileError, openRegularFile, readInputFile } from "@aegis/format/durable";
import { scanFrames } from "./scan.js";
import { WindowReader, readAt } from "./window.js";

/** One segment as opening found it. */
export interface SegmentState {
  readonly segment: number;
  readonly path: string;
  /** The file's size when it was opened. */
  readonly size: number;
  /** Where the whole frames end: the torn tail, if any, starts here. */
  readonly end: number;
  /** Whether the header is missing or torn (the file is shorter than one). */
  readonly tornHeader: boolean;
  /** A valid index covered every whole frame: nothing here needs writing again. */
  readonly indexed: boolean;
  /** Every record of the segment, kept when the caller will write its index. */
  readonly records: IndexRecord[] | undefined;
  /** Tombstones found by scanning rather than in an index: their redaction may be unfinished. */
  readonly scannedTombstones: readonly string[];
}

export interface LoadedDirectory {
  readonly dir: string;
  readonly salt: Buffer;
  readonly catalog: Catalog;
  readonly segments: readonly SegmentState[];
  readonly damage: EnvelopeDamage[];
  /** The highest segment number a segment or index file carries (0 for none). */
  readonly highest: number;
}

/**
 * Open a store directory's files (SPEC §14.4): the descriptor, then each segment in order,
 * from its index where a valid one exists and by scanning the frames the index does not
 * cover. Nothing is written here; a writer repairs what this reports.
 */
export async function loadDirectory(dir: string, keepRecords: boolean): Promise<LoadedDirectory> {
  const salt = await readDescriptor(dir);
  const names = await io(dir, () => readdir(dir));
  const segmentNumbers = new Set<number>();
  const indexNumbers = new Set<number>();
  for (const name of names) {
    const seg = segmentNumberOf(name, ".seg");
    if (seg !== undefined) segmentNumbers.add(seg);
    const idx = segmentNumberOf(name, ".idx");
    if (idx !== undefined) indexNumbers.add(idx);
  }
  const last = Math.max(0, ...segmentNumbers, ...indexNumbers);
  const lastSegment = Math.max(0, ...segmentNumbers);
  const catalog = new Catalog();
  const damage: EnvelopeDamage[] = [];
  const segments: SegmentState[] = [];
  for (const run of missingRuns([...segmentNumbers, last + 1])) damage.push(missingSegments(dir, run));
  for (const segment of [...segmentNumbers].sort((a, b) => a - b)) {
    const path = join(dir, segmentFileName(segment));
    const indexPath = indexNumbers.has(segment) ? join(dir, indexFileName(segment)) : undefined;
    const handle = await openSegment(path, damage);
    if (handle === undefined) continue;
    segments.push(await loadSegment({ segment, path, indexPath, salt, catalog, damage, keepRecords, isLast: segment === lastSegment }, handle));
  }
  return { dir, salt, catalog, segments, damage, highest: last };
}

/**
 * An index's bytes, or why they were not read: an index is never longer than the records
 * its segment can hold (one per smallest frame), so a larger one, or one that is no regular
 * file (a symlink to /dev/zero), is not read at all (SPEC §18).
 */
async function readIndexBytes(indexPath: string, segmentSize: number): Promise<Buffer | string> {
  const frames = Math.max(0, Math.floor((segmentSize - SEGMENT_HEADER_BYTES) / (FRAME_PREFIX_BYTES + ENTRY_HEAD_BYTES)));
  try {
    return await readInputFile(indexPath, INDEX_HEADER_BYTES + frames * INDEX_RECORD_BYTES);
  } catch (error) {
    if (error instanceof InputFileError) return error.fault.code === "too_large" ? `${error.message}, more than its segment can index` : error.message;
    throw ioError(indexPath, error);
  }
}

/** One damage for a run of absent segment numbers. */
export function missingSegments(dir: string, run: { readonly first: number; readonly last: number }): EnvelopeDamage {
  return {
    code: "missing_segment",
    path: join(dir, segmentFileName(run.first)),
    through: join(dir, segmentFileName(run.last)),
    count: run.last - run.first + 1,
  };
}

interface SegmentLoad {
  readonly segment: number;
  readonly path: string;
  readonly indexPath: string | undefined;
  readonly salt: Buffer;
  readonly catalog: Catalog;
  readonly damage: EnvelopeDamage[];
  readonly keepRecords: boolean;
  readonly isLast: boolean;
}

/**
 * Open a segment found in the directory, or report it as damage and give undefined when it is
 * no regular file: a FIFO in a segment's place is never waited on (SPEC §14.7, §18).
 */
export async function openSegment(path: string, damage: EnvelopeDamage[]): Promise<FileHandle | undefined> {
  try {
    return await openRegularFile(path);
  } catch (error) {
    if (error instanceof InputFileError && error.fault.code === "not_regular") {
      damage.push({ code: "not_regular_file", path, kind: error.fault.kind });
      return undefined;
    }
    throw ioError(path, error);
  }
}

async function loadSegment(load: SegmentLoad, handle: FileHandle): Promise<SegmentState> {
  const { segment, path, salt, catalog, damage } = load;
  try {
    const size = (await io(path, () => handle.stat())).size;
    if (size < SEGMENT_HEADER_BYTES) {
      if (size > 0) damage.push({ code: "torn_tail", path, offset: 0, length: size, cut: false });
      return { segment, path, size, end: 0, tornHeader: true, indexed: false, records: load.keepRecords ? [] : undefined, scannedTombstones: [] };
    }
    const header = Buffer.alloc(SEGMENT_HEADER_BYTES);
    await io(path, () => readAt(handle, header, 0));
    const headerFault = segmentHeaderFault(header, segment, salt);
    if (headerFault !== undefined) damage.push({ code: "damaged_header", path, offset: 0, detail: headerFault });

    const records: IndexRecord[] = [];
    let scanFrom = SEGMENT_HEADER_BYTES;
    if (load.indexPath !== undefined) {
      const indexPath = load.indexPath;
      const bytes = await readIndexBytes(indexPath, size);
      const index =
        typeof bytes === "string"
          ? { ok: false as const, detail: bytes }
          : decodeIndex(bytes, salt, { segment, fileSize: size, firstFrame: SEGMENT_HEADER_BYTES });
      if (index.ok) {
        for (const record of index.records) {
          // Only a tombstone needs its frame read; an entry is taken as the index says.
          if (record.kind === "entry") {
            records.push(record);
            catalog.addEntry(record.digest, { segment, frame: record.offset, size: record.size });
          } else {
            await applyIndexed(record, handle, load, records);
          }
        }
        scanFrom = index.covered;
      } else {
        damage.push({ code: "index_rebuilt", path: indexPath, detail: index.detail });
        // A valid index says frames reached further than the file now does: they are lost.
        if (index.covered !== undefined)
          damage.push({
            code: "damaged_frame",
            path,
            offset: size,
            length: index.covered - size,
            detail: `the segment ends at byte ${size}, but its index covered ${index.covered} bytes: the frames past the end are lost`,
          });
      }
    }

    // Scan what no index covers: the active segment's newer frames, or a segment whose index is missing.
    let end = scanFrom;
    const scannedTombstones: string[] = [];
    const suspects: { at: number; digest: string; offset: number; end: number; size: number; found: string }[] = [];
    const reader = new WindowReader(handle, size);
    // A writer hashes the values it finds beyond the index (after a crash, a frame can be on
    // disk with its value never written): a put must not count on bytes that are not there.
    const events = scanFrames(reader, salt, scanFrom, size, { hashValues: load.keepRecords });
    for await (const event of withPath(path, events)) {
      if (event.code === "frame") {
        const { head } = event;
        if (head.kind === "entry" && event.found !== undefined && event.found !== head.digest) {
          // Decided after the scan: a value zeroed by a redaction whose tombstone comes later is not damage.
          suspects.push({ at: records.length, digest: head.digest, offset: event.offset, end: event.end, size: event.valueLength, found: event.found });
          records.push({ kind: "entry", digest: head.digest, offset: event.offset, size: event.valueLength });
        } else if (head.kind === "entry") {
          catalog.addEntry(head.digest, { segment, frame: event.offset, size: event.valueLength });
          records.push({ kind: "entry", digest: head.digest, offset: event.offset, size: event.valueLength });
        } else {
          catalog.addTombstone(head.digest, { redactedAt: head.redactedAt, reason: head.reason, size: head.size });
          records.push({ kind: "tombstone", digest: head.digest, offset: event.offset, size: head.size });
          scannedTombstones.push(head.digest);
        }
        end = event.end;
      } else if (event.code === "damaged") {
        damage.push({ code: "damaged_frame", path, offset: event.offset, length: event.length, detail: event.detail });
        records.push({ kind: "damage", offset: event.offset, size: event.length, detail: event.detail });
        end = event.offset + event.length;
      } else {
        damage.push({ code: "torn_tail", path, offset: event.offset, length: event.length, cut: false });
      }
    }
    for (const x of suspects) {
      if (catalog.tombstone(x.digest) !== undefined) {
        catalog.addEntry(x.digest, { segment, frame: x.offset, size: x.size });
        continue;
      }
      const detail = `the value of ${x.digest} hashes to ${x.found}: its bytes were not all written`;
      damage.push({ code: "damaged_frame", path, offset: x.offset, length: x.end - x.offset, detail });
      records[x.at] = { kind: "damage", offset: x.offset, size: x.end - x.offset, detail };
    }
    const indexed = load.indexPath !== undefined && scanFrom === size;
    // Records are kept only where the writer will write them: the segment it appends to, and any it must index.
    const keep = load.keepRecords && (load.isLast || !indexed);
    return { segment, path, size, end, tornHeader: false, indexed, records: keep ? records : undefined, scannedTombstones };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Iterate `events`; an I/O error on the way names `path`. */
export async function* withPath<T>(path: string, events: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (error) {
    throw ioError(path, error);
  }
}

async function applyIndexed(record: IndexRecord, handle: FileHandle, load: SegmentLoad, records: IndexRecord[]): Promise<void> {
  records.push(record);
  await catalogRecord(record, handle, load);
}

/** Where index records are taken into a catalog: a store's segment, or a pack (segment 0). */
export interface RecordTarget {
  readonly segment: number;
  /** The segment's or the pack's path, which damage names. */
  readonly path: string;
  /** The salt of its frame checks: the store's, or the pack's id. */
  readonly salt: Uint8Array;
  readonly catalog: Catalog;
  readonly damage: EnvelopeDamage[];
}

/**
 * Take one index record into the catalog (SPEC §14.4); a tombstone's time and reason are read
 * from its frame, and one whose frame does not check, or names another digest, is damage.
 */
export async function catalogRecord(record: IndexRecord, handle: FileHandle, target: RecordTarget): Promise<void> {
  const { segment, path, salt, catalog, damage } = target;
  if (record.kind === "entry") {
    catalog.addEntry(record.digest, { segment, frame: record.offset, size: record.size });
  } else if (record.kind === "damage") {
    damage.push({ code: "damaged_frame", path, offset: record.offset, length: record.size, detail: record.detail });
  } else {
    const tombstone = await readTombstone(handle, salt, record.offset);
    if (tombstone.ok && tombstone.digest === record.digest) {
      catalog.addTombstone(record.digest, tombstone);
    } else {
      damage.push({
        code: "damaged_frame",
        path,
        offset: record.offset,
        length: 0,
        detail: tombstone.ok ? "the tombstone names another digest than its index record" : tombstone.detail,
      });
    }
  }
}

type TombstoneRead =
  | { readonly ok: true; readonly digest: string; readonly redactedAt: string; readonly reason: string; readonly size: number }
  | { readonly ok: false; readonly detail: string };

/** Read and check the tombstone frame at `offset`. */
async function readTombstone(handle: FileHandle, salt: Uint8Array, offset: number): Promise<TombstoneRead> {
  const prefix = Buffer.alloc(FRAME_PREFIX_BYTES);
  if ((await readAt(handle, prefix, offset)) < FRAME_PREFIX_BYTES) return { ok: false, detail: "the tombstone frame is cut short" };
  const lengths = readPrefix(prefix);
  if (!lengths.ok) return lengths;
  const frame = Buffer.alloc(FRAME_PREFIX_BYTES + lengths.headLength);
  if ((await readAt(handle, frame, offset)) < frame.length) return { ok: false, detail: "the tombstone frame is cut short" };
  const read = readHead(salt, frame, lengths.headLength, lengths.valueLength);
  if (!read.ok) return read;
  if (read.head.kind !== "tombstone") return { ok: false, detail: "the index names an entry frame as a tombstone" };
  return { ok: true, digest: read.head.digest, redactedAt: read.head.redactedAt, reason: read.head.reason, size: read.head.size };
}
