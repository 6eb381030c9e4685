import { randomBytes } from "node:crypto";
import { link, open, readdir, unlink, type FileHandle } from "node:fs/promises";
import { errnoOf } from "@aegis/format/internal";
import { PRIVATE_FILE_MODE, processRuns, processStart, syncDirectory } from "@aegis/format/durable";
import { basename, dirname, join } from "node:path";
import { checkDigest } from "./catalog.js";
import { EnvelopeError, exists, io, ioError } from "./errors.js";
import { framePrefix } from "./frame.js";
import { encodeHead } from "./head.js";
import { encodeIndex, type IndexRecord } from "./index-file.js";
import { FORMAT_VERSION, PACK_HEADER_BYTES, PACK_MAGIC, PACK_TRAILER_BYTES, PACK_TRAILER_MAGIC, SALT_BYTES } from "./layout.js";
import type { EntryDigest, EnvelopeSource } from "./source.js";

// Writing a pack (SPEC §14.9); pack-read.ts opens one.

/** A pack's header (SPEC §14.9; its layout in layout.ts): magic, version, zeros, the pack id. */
function encodePackHeader(id: Uint8Array): Buffer {
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
