import { randomBytes } from "node:crypto";
import { link, open, readdir, unlink, type FileHandle } from "node:fs/promises";
import { PRIVATE_FILE_MODE, openRegularFile, errnoOf, processRuns, processStart, syncDirectory } from "@aegis/format/internal";
import { basename, dirname, join } from "node:path";
import { Catalog, checkDigest, readThrough, type Location } from "./catalog.js";
import type { EnvelopeDamage } from "./damage.js";
import { readTombstone, withPath } from "./directory.js";
import { EnvelopeError, exists, io, ioError } from "./errors.js";
import { framePrefix } from "./frame.js";
import { encodeHead } from "./head.js";
import { decodeIndex, encodeIndex, type IndexRecord } from "./index-file.js";
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
import type { EntryDigest, EnvelopeEntry, EnvelopeRead, EnvelopeSource, EnvelopeStats } from "./source.js";
import { WindowReader, readAt } from "./window.js";

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
export function encodePackHeader(id: Uint8Array): Buffer {
  const out = Buffer.alloc(PACK_HEADER_BYTES);
  out.write(PACK_MAGIC, 0, "latin1");
  out.writeUInt16BE(FORMAT_VERSION, 8);
  Buffer.from(id).copy(out, 16);
  return out;
}

/** What {@link writePack} put in the pack, and what it left out and why. */
export interface PackReport {
  /** Where the pack was written: the `outPath` given. */
  readonly path: string;
  /** Entries whose bytes are in the pack (each verified against its digest when packed). */
  readonly entries: number;
  /** Tombstones in the pack: digests the recipient learns were redacted, when and why. */
  readonly tombstones: number;
  /** Digests asked for that the source does not hold: not in the pack. */
  readonly missing: readonly string[];
  /** Digests whose stored bytes did not hash to them: not in the pack (SPEC §14.9). */
  readonly mismatched: readonly { readonly digest: string; readonly found: string }[];
  /** The pack's size in bytes. */
  readonly bytes: number;
}

/** How {@link writePack} writes a pack. */
export interface PackOptions {
  /** The pack id (16 bytes). Random by default; fixed only to reproduce a pack byte for byte. */
  readonly id?: Uint8Array;
}

const FLUSH_BYTES = 1 << 20;

/**
 * Write a pack of `digests` from `source` to `outPath` (SPEC §14.9). Each digest is read
 * through the source, so its bytes are re-hashed: present bytes go in as an entry, a
 * redacted digest as its tombstone, and missing or mismatched digests are reported and
 * left out. The pack is written to a temporary file, synced, and linked into place, so
 * `outPath` either does not exist or holds a whole pack; an existing `outPath` is refused.
 *
 * @throws EnvelopeError `bad_digest` (before anything is written), `exists`, `io`.
 */
export async function writePack(source: EnvelopeSource, digests: Iterable<string>, outPath: string, options: PackOptions = {}): Promise<PackReport> {
  const wanted = [...new Set(digests)];
  for (const digest of wanted) checkDigest(digest);
  const id = options.id === undefined ? randomBytes(SALT_BYTES) : Buffer.from(options.id);
  if (id.length !== SALT_BYTES) throw new RangeError(`a pack id is ${SALT_BYTES} bytes`);
  // Before the refusal of an existing pack: a writer killed between its link and its unlink
  // left both the pack and its temporary file, and any later call to that path clears it.
  await removeAbandoned(outPath);
  if (await exists(outPath)) throw new EnvelopeError({ code: "exists", path: outPath });

  // The pid and its start time: a pid alone may be another process's by the time it is read.
  const temporary = `${outPath}.tmp-${process.pid}-${processStart(process.pid) ?? "0"}-${randomBytes(4).toString("hex")}`;
  // Named by the pack's path: a user gave that one, and a missing directory is its fault.
  // Owner-only whatever the umask, like the store it came from (SPEC §14.9): whoever it is for
  // is given it, not every user of this machine.
  const handle = await io(outPath, () => open(temporary, "wx", PRIVATE_FILE_MODE));
  const missing: string[] = [];
  const mismatched: { digest: string; found: string }[] = [];
  const records: IndexRecord[] = [];
  try {
    const out = new BufferedWriter(handle, temporary);
    await out.write(encodePackHeader(id));
    for (const digest of wanted) {
      const d = digest as EntryDigest;
      const read = await source.get(d);
      if (read.code === "present") {
        records.push({ kind: "entry", digest, offset: out.position, size: read.bytes.length });
        await out.write(framePrefix(id, encodeHead({ kind: "entry", digest }), read.bytes.length));
        await out.write(read.bytes);
      } else if (read.code === "redacted") {
        const size = (await source.entry(d))?.size ?? 0;
        records.push({ kind: "tombstone", digest, offset: out.position, size });
        await out.write(framePrefix(id, encodeHead({ kind: "tombstone", digest, redactedAt: read.redactedAt, reason: read.reason, size }), 0));
      } else if (read.code === "missing") {
        missing.push(digest);
      } else {
        mismatched.push({ digest, found: read.found });
      }
    }
    const indexOffset = out.position;
    await out.write(encodeIndex(id, 0, indexOffset, records));
    const trailer = Buffer.alloc(PACK_TRAILER_BYTES);
    trailer.writeBigUInt64BE(BigInt(indexOffset), 0);
    trailer.write(PACK_TRAILER_MAGIC, 8, "latin1");
    await out.write(trailer);
    await out.flush();
    await io(temporary, () => handle.sync());
    await handle.close();
    // link, not rename: it refuses to replace a file that appeared meanwhile.
    await link(temporary, outPath).catch((error: unknown) => {
      if (errnoOf(error) === "EEXIST") throw new EnvelopeError({ code: "exists", path: outPath });
      throw ioError(outPath, error);
    });
    await io(outPath, () => syncDirectory(dirname(outPath)));
    return {
      path: outPath,
      entries: records.filter((r) => r.kind === "entry").length,
      tombstones: records.filter((r) => r.kind === "tombstone").length,
      missing,
      mismatched,
      bytes: out.position,
    };
  } finally {
    await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * The temporary files a killed `writePack` to `outPath` left (`<out>.tmp-<pid>-<start>-<hex>`),
 * whose process no longer runs: removed, so a kill leaves nothing for long (SPEC §14.9).
 */
async function removeAbandoned(outPath: string): Promise<void> {
  const prefix = `${basename(outPath)}.tmp-`;
  const names = await readdir(dirname(outPath)).catch(() => [] as string[]);
  for (const name of names) {
    const found = /^(\d+)-(\d+)-[0-9a-f]{8}$/.exec(name.startsWith(prefix) ? name.slice(prefix.length) : "");
    const [pid, started] = [found?.[1], found?.[2]];
    if (pid === undefined) continue;
    if (!processRuns(Number(pid), started === "0" ? undefined : started)) await unlink(join(dirname(outPath), name)).catch(() => undefined);
  }
}

/** Sequential writes gathered into 1 MiB writes; a large value is written as it is. */
class BufferedWriter {
  position = 0;
  private parts: Uint8Array[] = [];
  private held = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly path: string,
  ) {}

  async write(bytes: Uint8Array): Promise<void> {
    this.parts.push(bytes);
    this.held += bytes.length;
    this.position += bytes.length;
    if (this.held >= FLUSH_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    const parts = this.parts;
    this.parts = [];
    this.held = 0;
    for (const part of parts) {
      for (let done = 0; done < part.length;) {
        const { bytesWritten } = await io(this.path, () => this.handle.write(part, done, part.length - done));
        done += bytesWritten;
      }
    }
  }
}

/**
 * A pack opened for reading (SPEC §14.9). Its index is read from the end; when the index
 * or trailer does not check, the frames are scanned instead and that is reported. Values
 * are re-hashed on every read, so a damaged value reads as `digest_mismatch`.
 */
export class PackSource implements EnvelopeSource {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly catalog: Catalog,
    readonly damage: readonly EnvelopeDamage[],
    private readonly size: number,
  ) {}

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
        for (const record of indexed.records) {
          if (record.kind === "entry") {
            catalog.addEntry(record.digest, { segment: 0, frame: record.offset, size: record.size });
          } else if (record.kind === "tombstone") {
            const tombstone = await io(path, () => readTombstone(handle, id, record.offset));
            if (tombstone.ok && tombstone.digest === record.digest) catalog.addTombstone(record.digest, tombstone);
            else
              damage.push({
                code: "damaged_frame",
                path,
                offset: record.offset,
                length: 0,
                detail: tombstone.ok ? "the tombstone names another digest than its index record" : tombstone.detail,
              });
          } else {
            damage.push({ code: "damaged_frame", path, offset: record.offset, length: record.size, detail: record.detail });
          }
        }
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

  private closed = false;

  get<D extends EntryDigest>(digest: D): Promise<EnvelopeRead<D>> {
    if (this.closed) return Promise.reject(new EnvelopeError({ code: "closed" }));
    return readThrough(this.catalog, digest, (location) => this.readValue(location));
  }

  private async readValue(location: Location): Promise<Uint8Array> {
    const bytes = Buffer.allocUnsafeSlow(location.size);
    const got = await io(this.path, () => readAt(this.handle, bytes, valueOffsetOf(location.frame)));
    return got === bytes.length ? bytes : bytes.subarray(0, got);
  }

  async entry(digest: EntryDigest): Promise<EnvelopeEntry | undefined> {
    checkDigest(digest);
    return this.catalog.entry(digest);
  }

  async *entries(): AsyncGenerator<EnvelopeEntry> {
    yield* this.catalog.list();
  }

  async stats(): Promise<EnvelopeStats> {
    return { ...this.catalog.counts(), files: 1, diskBytes: this.size };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
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
