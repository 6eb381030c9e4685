import { closeSync, fsyncSync, ftruncateSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { describeFileKind, kindOf, acquireLockFile, makeDirectories, openRegularFileSync, syncDirectory } from "@aegis/format/durable";
import { type RecoveredLock } from "@aegis/format";
import type { Catalog, Location } from "./catalog.js";
import type { EnvelopeDamage } from "./damage.js";
import { createDescriptor, encodeSegmentHeader } from "./descriptor.js";
import { loadDirectory, type SegmentState } from "./directory.js";
import { EnvelopeError, exists, io, ioError } from "./errors.js";
import { writeIndexFile } from "./index-io.js";
import { DESCRIPTOR_FILE, LOCK_FILE, SEGMENT_HEADER_BYTES, segmentFileName } from "./layout.js";
import { isScrubbed, scrubValue } from "./redaction.js";
import { SegmentFiles } from "./segment-files.js";
import { createSegment, writeAllSync, type Active } from "./segment-writer.js";

/** A store opened for writing, recovered from whatever a crash left (SPEC §14.5). */
export interface OpenedStore {
  readonly salt: Buffer;
  readonly catalog: Catalog;
  readonly active: Active;
  readonly files: SegmentFiles;
  readonly damage: readonly EnvelopeDamage[];
  readonly release: () => Promise<void>;
  readonly recoveredLock: RecoveredLock | undefined;
}

/**
 * Take the store in `dir` for writing, creating it when the directory is absent or empty
 * (unless `create` is false): the lock, then the descriptor, then every segment read; torn
 * tails cut back to the last whole frame, interrupted redactions finished, missing indexes
 * written, and the segment appends continue in chosen.
 */
export async function openStore(dir: string, create: boolean, id: Uint8Array | undefined): Promise<OpenedStore> {
  const kind = await stat(dir).then(kindOf, () => undefined);
  if (kind !== undefined && kind !== "directory") {
    throw new EnvelopeError({
      code: "not_an_envelope",
      path: dir,
      detail:
        kind === "file"
          ? "a file, not a store directory: a pack is read-only (redact in the store it was made from, then pack again)"
          : `${describeFileKind(kind)}, not a store directory`,
    });
  }
  if (!create && !(await exists(join(dir, DESCRIPTOR_FILE)))) {
    throw new EnvelopeError({
      code: "not_an_envelope",
      path: dir,
      detail: `no ${DESCRIPTOR_FILE} descriptor: not a store (and this open does not create one)`,
    });
  }
  // Owner-only, whatever the umask: it will hold verbatim secrets (SPEC §14.2). A directory
  // that exists keeps its mode.
  await io(dir, () => makeDirectories(dir));
  const lockPath = join(dir, LOCK_FILE);
  const lock = await io(lockPath, () => acquireLockFile(lockPath));
  if (!lock.ok)
    throw new EnvelopeError({ code: "locked", lockPath: lock.lockPath, ...(lock.holder === undefined ? {} : { holder: lock.holder }), stale: lock.stale });
  const opened: number[] = [];
  try {
    if (!(await exists(join(dir, DESCRIPTOR_FILE)))) {
      // The lock, and what a writer killed while taking one leaves (`writer.lock.<pid>.<id>.tmp`).
      const others = (await io(dir, () => readdir(dir))).filter((name) => !name.startsWith(LOCK_FILE) && name !== `${DESCRIPTOR_FILE}.tmp`);
      if (others.length > 0) {
        throw new EnvelopeError({
          code: "not_an_envelope",
          path: dir,
          detail: `the directory holds files (${others.slice(0, 3).join(", ")}) but no ${DESCRIPTOR_FILE}`,
        });
      }
      await createDescriptor(dir, id);
    }
    const loaded = await loadDirectory(dir, true);
    const { salt, catalog } = loaded;
    const cut = new Set<string>();
    for (const segment of loaded.segments) {
      if (repairTail(segment, salt)) cut.add(segment.path);
    }
    // Redactions a crash interrupted: the tombstone is durable, the bytes may not be gone yet.
    for (const segment of loaded.segments) {
      for (const digest of segment.scannedTombstones) await scrubAll(dir, catalog.locations(digest));
    }
    const damage = loaded.damage.map((d) => (d.code === "torn_tail" && cut.has(d.path) ? { ...d, cut: true } : d));
    // Appends continue in the last segment, unless a later number is missing (its index may
    // still be there) or the last one's header is damaged: then a new segment starts.
    const last = loaded.segments.at(-1);
    const reusable = last !== undefined && last.segment === loaded.highest && !damage.some((d) => d.code === "damaged_header" && d.path === last.path);
    for (const segment of loaded.segments) {
      if (segment === last && reusable) continue;
      if (!segment.indexed || cut.has(segment.path))
        await io(segment.path, () => writeIndexFile(dir, salt, segment.segment, endAfterRepair(segment), segment.records ?? []));
    }
    const files = new SegmentFiles(dir);
    let active: Active;
    if (last !== undefined && reusable) {
      const fd = await io(last.path, async () => openRegularFileSync(last.path, "write"));
      opened.push(fd);
      active = { segment: last.segment, path: last.path, fd, size: endAfterRepair(last), records: [...(last.records ?? [])] };
    } else {
      const segment = loaded.highest + 1;
      const path = join(dir, segmentFileName(segment));
      const fd = await io(path, async () => createSegment(path, segment, salt));
      opened.push(fd);
      await io(dir, () => syncDirectory(dir));
      active = { segment, path, fd, size: SEGMENT_HEADER_BYTES, records: [] };
    }
    files.pin(active.segment, active.fd);
    return { salt, catalog, active, files, damage, release: lock.release, recoveredLock: lock.recovered };
  } catch (error) {
    for (const fd of opened) closeSync(fd);
    await lock.release();
    throw error;
  }
}

/**
 * Cut a segment's torn tail back to its last whole frame, or rewrite a torn header
 * (SPEC §14.5, [M14.8]). Only bytes no put was acknowledged for are removed: an
 * acknowledged frame was whole and synced before its put resolved.
 */
function repairTail(segment: SegmentState, salt: Buffer): boolean {
  if (!segment.tornHeader && segment.end >= segment.size) return false;
  let fd: number;
  try {
    fd = openRegularFileSync(segment.path, "write");
  } catch (error) {
    throw ioError(segment.path, error);
  }
  try {
    if (segment.tornHeader) {
      ftruncateSync(fd, 0);
      writeAllSync(fd, [encodeSegmentHeader(segment.segment, salt)], 0);
    } else {
      ftruncateSync(fd, segment.end);
    }
    fsyncSync(fd);
  } catch (error) {
    throw ioError(segment.path, error);
  } finally {
    closeSync(fd);
  }
  return true;
}

function endAfterRepair(segment: SegmentState): number {
  return segment.tornHeader ? SEGMENT_HEADER_BYTES : segment.end;
}

/** Overwrite the bytes of every copy of a redacted value that is not yet zero. */
export async function scrubAll(dir: string, locations: readonly Location[]): Promise<void> {
  for (const location of locations) {
    const path = join(dir, segmentFileName(location.segment));
    if (!(await io(path, () => isScrubbed(dir, location)))) await io(path, () => scrubValue(dir, location));
  }
}
