import type { FileHandle } from "node:fs/promises";
import { openRegularFile } from "@aegis/format/durable";
import { Catalog, type Location } from "./catalog.js";
import { CatalogSource, type DiskUsage } from "./catalog-source.js";
import type { EnvelopeDamage } from "./damage.js";
import { catalogRecord, withPath } from "./directory.js";
import { EnvelopeError, io } from "./errors.js";
import { decodeIndex, type IndexRecord } from "./index-file.js";
import {
  ENTRY_HEAD_BYTES,
  FORMAT_VERSION,
  FRAME_PREFIX_BYTES,
  INDEX_HEADER_BYTES,
  INDEX_RECORD_BYTES,
  PACK_HEADER_BYTES,
  PACK_MAGIC,
  PACK_TRAILER_BYTES,
  PACK_TRAILER_MAGIC,
  SALT_BYTES,
  valueOffsetOf,
} from "./layout.js";
import { scanFrames } from "./scan.js";
import { WindowReader, readAt } from "./window.js";

// Reading a pack (SPEC §14.9); pack-write.ts writes one.

/**
 * A pack opened for reading (SPEC §14.9). Its index is read from the end; when the index
 * or trailer does not check, the frames are scanned instead and that is reported. Values
 * are re-hashed on every read, so a damaged value reads as `digest_mismatch`.
 */
export class PackSource extends CatalogSource {
  private constructor(
    path: string,
    private readonly handle: FileHandle,
    catalog: Catalog,
    damage: readonly EnvelopeDamage[],
    private readonly size: number,
  ) {
    super(path, catalog, damage);
  }

  static async open(path: string): Promise<PackSource> {
    const handle = await io(path, () => openRegularFile(path));
    try {
      const size = (await io(path, () => handle.stat())).size;
      const header = Buffer.alloc(PACK_HEADER_BYTES);
      const got = await io(path, () => readAt(handle, header, 0));
      if (got < PACK_HEADER_BYTES || header.toString("latin1", 0, 8) !== PACK_MAGIC) {
        throw new EnvelopeError({ code: "not_an_envelope", path, detail: `it does not start with "${PACK_MAGIC}"` });
      }
      const version = header.readUInt16BE(8);
      if (version !== FORMAT_VERSION) throw new EnvelopeError({ code: "unsupported_version", path, version });
      const id = header.subarray(16, 16 + SALT_BYTES);
      const damage: EnvelopeDamage[] = [];
      if (!header.subarray(10, 16).equals(Buffer.alloc(6))) damage.push({ code: "damaged_header", path, offset: 10, detail: "reserved bytes are not zero" });
      const catalog = new Catalog();
      const indexed = await readPackIndex(handle, path, id, size);
      if (indexed.ok) {
        for (const record of indexed.records) await io(path, () => catalogRecord(record, handle, { segment: 0, path, salt: id, catalog, damage }));
      } else {
        damage.push({ code: "index_rebuilt", path, detail: indexed.detail });
        const end = indexed.framesEnd;
        for await (const event of withPath(path, scanFrames(new WindowReader(handle, end), id, PACK_HEADER_BYTES, end, { hashValues: false }))) {
          if (event.code === "frame") {
            const { head } = event;
            if (head.kind === "entry") catalog.addEntry(head.digest, { segment: 0, frame: event.offset, size: event.valueLength });
            else catalog.addTombstone(head.digest, { redactedAt: head.redactedAt, reason: head.reason, size: head.size });
          } else if (event.code === "damaged") {
            damage.push({ code: "damaged_frame", path, offset: event.offset, length: event.length, detail: event.detail });
          } else {
            damage.push({ code: "torn_tail", path, offset: event.offset, length: event.length, cut: false });
          }
        }
      }
      return new PackSource(path, handle, catalog, damage, size);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  protected async readValue(location: Location): Promise<Uint8Array> {
    const bytes = Buffer.allocUnsafeSlow(location.size);
    const got = await io(this.path, () => readAt(this.handle, bytes, valueOffsetOf(location.frame)));
    return got === bytes.length ? bytes : bytes.subarray(0, got);
  }

  protected diskUsage(): Promise<DiskUsage> {
    return Promise.resolve({ files: 1, diskBytes: this.size });
  }

  protected release(): Promise<void> {
    return this.handle.close();
  }
}

type PackIndex =
  | { readonly ok: true; readonly records: readonly IndexRecord[] }
  /** `framesEnd`: where a scan should stop (the index's start when the trailer checks). */
  | { readonly ok: false; readonly detail: string; readonly framesEnd: number };

async function readPackIndex(handle: FileHandle, path: string, id: Uint8Array, size: number): Promise<PackIndex> {
  if (size < PACK_HEADER_BYTES + PACK_TRAILER_BYTES) return { ok: false, detail: "the pack ends before its trailer", framesEnd: size };
  const trailer = Buffer.alloc(PACK_TRAILER_BYTES);
  await io(path, () => readAt(handle, trailer, size - PACK_TRAILER_BYTES));
  if (trailer.toString("latin1", 8) !== PACK_TRAILER_MAGIC) return { ok: false, detail: `no "${PACK_TRAILER_MAGIC}" trailer`, framesEnd: size };
  const indexOffset = Number(trailer.readBigUInt64BE(0));
  if (indexOffset < PACK_HEADER_BYTES || indexOffset > size - PACK_TRAILER_BYTES)
    return { ok: false, detail: `the trailer points at byte ${indexOffset}`, framesEnd: size };
  // An index holds one record per frame before it, each frame at least a prefix and a head:
  // a trailer pointing at byte 32 of a 1 GiB pack must not make a 1 GiB allocation.
  const length = size - PACK_TRAILER_BYTES - indexOffset;
  const most = INDEX_HEADER_BYTES + Math.floor((indexOffset - PACK_HEADER_BYTES) / (FRAME_PREFIX_BYTES + ENTRY_HEAD_BYTES)) * INDEX_RECORD_BYTES;
  if (length > most)
    return { ok: false, detail: `the trailer points at byte ${indexOffset}, leaving ${length} bytes of index for at most ${most}`, framesEnd: size };
  const bytes = Buffer.alloc(length);
  await io(path, () => readAt(handle, bytes, indexOffset));
  const index = decodeIndex(bytes, id, { segment: 0, fileSize: indexOffset, firstFrame: PACK_HEADER_BYTES });
  if (!index.ok) return { ok: false, detail: index.detail, framesEnd: indexOffset };
  if (index.covered !== indexOffset) return { ok: false, detail: `the index covers ${index.covered} bytes, not ${indexOffset}`, framesEnd: indexOffset };
  return { ok: true, records: index.records };
}
