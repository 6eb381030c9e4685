import { closeSync, fsyncSync, openSync, writevSync } from "node:fs";
import { join } from "node:path";
import { PRIVATE_FILE_MODE, syncDirectory, syncFile, type CommitTarget } from "@aegis/format/durable";
import { encodeSegmentHeader } from "./descriptor.js";
import type { IndexRecord } from "./index-file.js";
import { SEGMENT_HEADER_BYTES, segmentFileName } from "./layout.js";
import type { SegmentFiles } from "./segment-files.js";

/** The segment puts append to (SPEC §14.3). */
export interface Active {
  readonly segment: number;
  readonly path: string;
  readonly fd: number;
  size: number;
  readonly records: IndexRecord[];
}

/**
 * Values below this size are copied and written together with the rest of their batch (one
 * `pwritev` per batch: a system call per put cost more than the rest of a 1 KiB put);
 * larger ones are written from the caller's bytes at once, sparing the copy.
 */
export const BATCHED_VALUE_BYTES = 64 * 1024;
/** Buffers per `pwritev`, under the kernel's IOV_MAX (1024). */
const IOV_PER_WRITE = 512;

/**
 * Appending frames to a store's segments, and making them durable (the store's side of the
 * group commit): a batch of frames is written with one `pwritev`; a flush syncs every file
 * written since the last, and the directory after a new segment was made.
 */
export class SegmentWriter implements CommitTarget {
  /** Frames appended to the active segment and not yet written, from `unwrittenFrom`. */
  private unwritten: Uint8Array[] = [];
  private unwrittenFrom = 0;
  private readonly dirty = new Set<number>();
  private syncDirectoryNext = false;

  constructor(
    private readonly dir: string,
    private readonly salt: Buffer,
    public active: Active,
    private readonly files: SegmentFiles,
    private readonly segmentBytes: number,
    /** A full segment, once the next one has begun: its index is written when it is durable. */
    private readonly onFull: (full: Active) => void,
  ) {}

  /**
   * Append one frame at the end of the active segment, rotating first when it is full: into
   * the batch that the next flush writes, or (`batched` false) written now, after the batch,
   * so that frames reach the file in the order they were appended. Returns its offset.
   */
  append(parts: readonly Uint8Array[], batched: boolean): number {
    const length = parts.reduce((n, p) => n + p.length, 0);
    if (this.active.size > SEGMENT_HEADER_BYTES && this.active.size + length > this.segmentBytes) this.rotate();
    const frame = this.active.size;
    if (batched) {
      if (this.unwritten.length === 0) this.unwrittenFrom = frame;
      this.unwritten.push(...parts);
    } else {
      this.write();
      writeAllSync(this.active.fd, parts, frame);
    }
    this.active.size += length;
    this.dirty.add(this.active.fd);
    return frame;
  }

  /** Write the batch to the active segment: one `pwritev` for every frame appended since the last. */
  write(): void {
    if (this.unwritten.length === 0) return;
    const parts = this.unwritten;
    this.unwritten = [];
    writeAllSync(this.active.fd, parts, this.unwrittenFrom);
  }

  sync(inPlace: boolean): Promise<void> {
    const fds = [...this.dirty];
    const directory = this.syncDirectoryNext;
    this.dirty.clear();
    this.syncDirectoryNext = false;
    const [only] = fds;
    if (inPlace && fds.length === 1 && !directory && only !== undefined) return syncFile(only, true);
    return Promise.all([...fds.map((fd) => syncFile(fd, false)), directory ? syncDirectory(this.dir) : undefined]).then(() => undefined);
  }

  discard(): void {
    this.unwritten = [];
  }

  /** A sealed segment is synced no more. */
  forget(full: Active): void {
    this.dirty.delete(full.fd);
  }

  /**
   * Start the next segment. Synchronous, inside the put that needs it; the new file's
   * directory entry is synced with the next batch.
   */
  private rotate(): void {
    this.write();
    const full = this.active;
    const segment = full.segment + 1;
    const path = join(this.dir, segmentFileName(segment));
    const fd = createSegment(path, segment, this.salt, false);
    this.active = { segment, path, fd, size: SEGMENT_HEADER_BYTES, records: [] };
    this.files.pin(segment, fd);
    this.dirty.add(fd);
    this.syncDirectoryNext = true;
    this.onFull(full);
  }
}

/** Write all of `parts` at `position`: `writev` may write less than asked. */
export function writeAllSync(fd: number, parts: readonly Uint8Array[], position: number): void {
  let pending = parts.filter((p) => p.length > 0);
  let at = position;
  while (pending.length > 0) {
    let written = writevSync(fd, pending.length > IOV_PER_WRITE ? pending.slice(0, IOV_PER_WRITE) : pending, at);
    at += written;
    const rest: Uint8Array[] = [];
    for (const part of pending) {
      if (written >= part.length) {
        written -= part.length;
        continue;
      }
      rest.push(written > 0 ? part.subarray(written) : part);
      written = 0;
    }
    pending = rest;
  }
}

/** Create a segment file with its header; synced here only when `sync` (else with the next batch). */
export function createSegment(path: string, segment: number, salt: Buffer, sync = true): number {
  // Verbatim requests and responses, secrets among them: owner-only whatever the umask (SPEC §14.2).
  const fd = openSync(path, "wx+", PRIVATE_FILE_MODE);
  try {
    writeAllSync(fd, [encodeSegmentHeader(segment, salt)], 0);
    if (sync) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}
