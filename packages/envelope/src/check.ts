import { readdir, stat, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { EnvelopeDamage } from "./damage.js";
import { readDescriptor, segmentHeaderFault } from "./descriptor.js";
import { missingSegments, openSegment, withPath } from "./directory.js";
import { EnvelopeError, io } from "./errors.js";
import { sameHex } from "@aegis/format/internal";
import { describeFileKind, kindOf, openRegularFile } from "@aegis/format/durable";
import {
  FORMAT_VERSION,
  PACK_HEADER_BYTES,
  PACK_MAGIC,
  PACK_TRAILER_BYTES,
  PACK_TRAILER_MAGIC,
  SALT_BYTES,
  SEGMENT_HEADER_BYTES,
  missingRuns,
  segmentFileName,
  segmentNumberOf,
} from "./layout.js";
import { scanFrames } from "./scan.js";
import { WindowReader, readAt } from "./window.js";

/** What a full check of every frame found (SPEC §14.7). */
export interface EnvelopeCheck {
  /** The store directory or pack file checked, as given. */
  readonly path: string;
  /** Whether `path` was a store directory or a pack file. */
  readonly kind: "store" | "pack";
  /** Entry frames read. */
  readonly entries: number;
  /** Entry frames whose value hashes to their digest. */
  readonly verified: number;
  /** Tombstone frames read. */
  readonly tombstones: number;
  /** Entry frames whose value does not hash to their digest and that no tombstone explains. */
  readonly mismatched: readonly { readonly digest: string; readonly found: string; readonly path: string; readonly offset: number }[];
  /** Damaged frames, torn tails, damaged headers and missing segments, each with its file and offset. */
  readonly damage: readonly EnvelopeDamage[];
  /**
   * Entry frames of redacted digests whose bytes are still there, hashing to their digest:
   * a redaction whose scrub did not finish (SPEC §14.8). The next writer to open the store
   * finishes it; until then the secret is on disk.
   */
  readonly unscrubbed: readonly { readonly digest: string; readonly path: string; readonly offset: number }[];
}

/**
 * Read every frame of a store or pack and re-hash every value (SPEC §14.7), ignoring the
 * indexes. Opening trusts an index that checks and so does not see damage in the frames it
 * covers; this does, at the cost of reading everything.
 *
 * @throws EnvelopeError `not_an_envelope`, `unsupported_version`, `damaged_descriptor`, `io`.
 */
export async function checkEnvelope(path: string): Promise<EnvelopeCheck> {
  const info = await io(path, () => stat(path));
  const kind = kindOf(info);
  if (kind !== "file" && kind !== "directory")
    throw new EnvelopeError({ code: "not_an_envelope", path, detail: `${describeFileKind(kind)}, neither a store directory nor a pack file` });
  const tally = new Tally(path, info.isDirectory() ? "store" : "pack");
  if (info.isDirectory()) await checkDirectory(path, tally);
  else await checkPack(path, tally);
  return tally.result();
}

class Tally {
  entries = 0;
  verified = 0;
  tombstones = 0;
  readonly damage: EnvelopeDamage[] = [];
  private readonly unverified: { digest: string; found: string; path: string; offset: number }[] = [];
  private readonly redacted = new Set<string>();
  private readonly verifiedAt = new Map<string, { digest: string; path: string; offset: number }[]>();

  constructor(
    readonly path: string,
    readonly kind: "store" | "pack",
  ) {}

  async scan(file: string, handle: FileHandle, salt: Uint8Array, start: number, end: number): Promise<void> {
    const events = scanFrames(new WindowReader(handle, end), salt, start, end, { hashValues: true });
    for await (const event of withPath(file, events)) {
      if (event.code === "frame") {
        const { head } = event;
        if (head.kind === "tombstone") {
          this.tombstones++;
          this.redacted.add(head.digest);
        } else {
          this.entries++;
          const found = event.found ?? "";
          if (sameHex(found, head.digest)) {
            this.verified++;
            const at = this.verifiedAt.get(head.digest) ?? [];
            at.push({ digest: head.digest, path: file, offset: event.offset });
            this.verifiedAt.set(head.digest, at);
          } else this.unverified.push({ digest: head.digest, found, path: file, offset: event.offset });
        }
      } else if (event.code === "damaged") {
        this.damage.push({ code: "damaged_frame", path: file, offset: event.offset, length: event.length, detail: event.detail });
      } else {
        this.damage.push({ code: "torn_tail", path: file, offset: event.offset, length: event.length, cut: false });
      }
    }
  }

  result(): EnvelopeCheck {
    // A redacted entry's value is zeros by design: its tombstone explains it.
    const mismatched = this.unverified.filter((m) => !this.redacted.has(m.digest));
    const unscrubbed = [...this.redacted].flatMap((digest) => this.verifiedAt.get(digest) ?? []);
    return {
      path: this.path,
      kind: this.kind,
      entries: this.entries,
      verified: this.verified,
      tombstones: this.tombstones,
      mismatched,
      damage: this.damage,
      unscrubbed,
    };
  }
}

async function checkDirectory(dir: string, tally: Tally): Promise<void> {
  const salt = await readDescriptor(dir);
  const numbers = (await io(dir, () => readdir(dir)))
    .map((name) => segmentNumberOf(name, ".seg"))
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => a - b);
  for (const run of missingRuns(numbers)) tally.damage.push(missingSegments(dir, run));
  for (const segment of numbers) {
    const file = join(dir, segmentFileName(segment));
    const opened = await openSegment(file, tally.damage);
    if (opened === undefined) continue;
    await withHandle(file, opened, async (handle, size) => {
      if (size < SEGMENT_HEADER_BYTES) {
        if (size > 0) tally.damage.push({ code: "torn_tail", path: file, offset: 0, length: size, cut: false });
        return;
      }
      const header = Buffer.alloc(SEGMENT_HEADER_BYTES);
      await readAt(handle, header, 0);
      const fault = segmentHeaderFault(header, segment, salt);
      if (fault !== undefined) tally.damage.push({ code: "damaged_header", path: file, offset: 0, detail: fault });
      await tally.scan(file, handle, salt, SEGMENT_HEADER_BYTES, size);
    });
  }
}

async function checkPack(path: string, tally: Tally): Promise<void> {
  await withHandle(path, await io(path, () => openRegularFile(path)), async (handle, size) => {
    const header = Buffer.alloc(PACK_HEADER_BYTES);
    const got = await readAt(handle, header, 0);
    if (got < PACK_HEADER_BYTES || header.toString("latin1", 0, 8) !== PACK_MAGIC) {
      throw new EnvelopeError({ code: "not_an_envelope", path, detail: `it does not start with "${PACK_MAGIC}"` });
    }
    const version = header.readUInt16BE(8);
    if (version !== FORMAT_VERSION) throw new EnvelopeError({ code: "unsupported_version", path, version });
    let end = size;
    const trailer = Buffer.alloc(PACK_TRAILER_BYTES);
    if (
      size >= PACK_HEADER_BYTES + PACK_TRAILER_BYTES &&
      (await readAt(handle, trailer, size - PACK_TRAILER_BYTES)) === PACK_TRAILER_BYTES &&
      trailer.toString("latin1", 8) === PACK_TRAILER_MAGIC
    ) {
      const indexOffset = Number(trailer.readBigUInt64BE(0));
      if (indexOffset >= PACK_HEADER_BYTES && indexOffset <= size - PACK_TRAILER_BYTES) end = indexOffset;
    }
    // Without a trailer the scan runs to the end, and reports whatever is not a frame there.
    await tally.scan(path, handle, header.subarray(16, 16 + SALT_BYTES), PACK_HEADER_BYTES, end);
  });
}

async function withHandle(path: string, handle: FileHandle, action: (handle: FileHandle, size: number) => Promise<void>): Promise<void> {
  try {
    const size = (await io(path, () => handle.stat())).size;
    await io(path, () => action(handle, size));
  } finally {
    await handle.close().catch(() => undefined);
  }
}
