import { sha256Of } from "./hash.js";
import { ENTRY_HEAD_BYTES, FORMAT_VERSION, FRAME_PREFIX_BYTES, INDEX_HEADER_BYTES, INDEX_MAGIC, INDEX_RECORD_BYTES, MAX_ENTRY_BYTES } from "./layout.js";

/**
 * An index block (SPEC §14.4): what a segment (or a pack) holds, so that opening reads
 * 48 bytes per entry instead of scanning every frame.
 *
 *   0   8  "AEGISIDX"
 *   8   2  version (1)
 *   10  2  zero
 *   12  4  segment number (0 in a pack)
 *   16  8  covered: the byte length of the file the records describe
 *   24  4  record count n
 *   28  4  zero
 *   32  32 SHA-256(salt ‖ bytes 0..32 ‖ records), the salt being the store's (or pack's) id
 *   64  n records of 48 bytes: digest (32) | frame offset (8) | size (4) | kind (1) | zero (3)
 *
 * kind 1 is an entry (size: the value's length), 2 a tombstone (size: the length of the
 * value it removed), 3 a damaged range (digest zero, size: bytes skipped), so that damage
 * found once is reported again by every later open.
 */
export type IndexRecord =
  | { readonly kind: "entry"; readonly digest: string; readonly offset: number; readonly size: number }
  | { readonly kind: "tombstone"; readonly digest: string; readonly offset: number; readonly size: number }
  | { readonly kind: "damage"; readonly offset: number; readonly size: number; readonly detail: string };

const KIND = { entry: 1, tombstone: 2, damage: 3 } as const;
const ZERO_DIGEST = "0".repeat(64);

export function encodeIndex(salt: Uint8Array, segment: number, covered: number, records: readonly IndexRecord[]): Buffer {
  const out = Buffer.alloc(INDEX_HEADER_BYTES + records.length * INDEX_RECORD_BYTES);
  out.write(INDEX_MAGIC, 0, "latin1");
  out.writeUInt16BE(FORMAT_VERSION, 8);
  out.writeUInt32BE(segment, 12);
  out.writeBigUInt64BE(BigInt(covered), 16);
  out.writeUInt32BE(records.length, 24);
  records.forEach((record, i) => {
    const at = INDEX_HEADER_BYTES + i * INDEX_RECORD_BYTES;
    out.write(record.kind === "damage" ? ZERO_DIGEST : record.digest, at, "hex");
    out.writeBigUInt64BE(BigInt(record.offset), at + 32);
    out.writeUInt32BE(record.size, at + 40);
    out.writeUInt8(KIND[record.kind], at + 44);
  });
  sha256Of(salt, out.subarray(0, 32), out.subarray(INDEX_HEADER_BYTES)).copy(out, 32);
  return out;
}

export type IndexRead =
  | { readonly ok: true; readonly covered: number; readonly records: readonly IndexRecord[] }
  /** `covered`: set when an index that checks covers more than the file holds (it was cut short). */
  | { readonly ok: false; readonly detail: string; readonly version?: number; readonly covered?: number };

/**
 * Decode an index block and check it against what it claims to describe (SPEC §14.4,
 * [M14.6]): its checksum (keyed by the store's id, so another store's index fails), its
 * segment number, records in file order inside `covered`, and `covered` no longer than
 * the file. Anything else and the caller scans instead.
 */
export function decodeIndex(
  bytes: Buffer,
  salt: Uint8Array,
  expected: { readonly segment: number; readonly fileSize: number; readonly firstFrame: number },
): IndexRead {
  if (bytes.length < INDEX_HEADER_BYTES || bytes.toString("latin1", 0, 8) !== INDEX_MAGIC) return { ok: false, detail: "no index magic" };
  const version = bytes.readUInt16BE(8);
  if (version !== FORMAT_VERSION) return { ok: false, detail: `index version ${version} is not 1`, version };
  const count = bytes.readUInt32BE(24);
  if (bytes.length !== INDEX_HEADER_BYTES + count * INDEX_RECORD_BYTES) return { ok: false, detail: `index length does not hold ${count} records` };
  if (!sha256Of(salt, bytes.subarray(0, 32), bytes.subarray(INDEX_HEADER_BYTES)).equals(bytes.subarray(32, 64)))
    return { ok: false, detail: "index checksum does not match" };
  if (bytes.readUInt32BE(12) !== expected.segment) return { ok: false, detail: `index names segment ${bytes.readUInt32BE(12)}` };
  const covered = Number(bytes.readBigUInt64BE(16));
  if (covered > expected.fileSize) return { ok: false, detail: `index covers ${covered} bytes of a ${expected.fileSize}-byte file`, covered };
  if (covered < expected.firstFrame) return { ok: false, detail: `index covers ${covered} bytes of a ${expected.fileSize}-byte file` };
  const records: IndexRecord[] = [];
  let after = expected.firstFrame;
  for (let i = 0; i < count; i++) {
    const at = INDEX_HEADER_BYTES + i * INDEX_RECORD_BYTES;
    const digest = bytes.toString("hex", at, at + 32);
    const offset = Number(bytes.readBigUInt64BE(at + 32));
    const size = bytes.readUInt32BE(at + 40);
    const kind = bytes.readUInt8(at + 44);
    if (offset < after) return { ok: false, detail: `record ${i} is out of file order` };
    if (kind === KIND.entry) {
      const end = offset + FRAME_PREFIX_BYTES + ENTRY_HEAD_BYTES + size;
      if (size > MAX_ENTRY_BYTES || end > covered) return { ok: false, detail: `record ${i} runs past the covered bytes` };
      records.push({ kind: "entry", digest, offset, size });
      after = end;
    } else if (kind === KIND.tombstone) {
      if (offset + FRAME_PREFIX_BYTES > covered) return { ok: false, detail: `record ${i} runs past the covered bytes` };
      records.push({ kind: "tombstone", digest, offset, size });
      after = offset + FRAME_PREFIX_BYTES;
    } else if (kind === KIND.damage && digest === ZERO_DIGEST) {
      if (offset + size > covered) return { ok: false, detail: `record ${i} runs past the covered bytes` };
      records.push({ kind: "damage", offset, size, detail: "recorded when the index was written" });
      after = offset + size;
    } else {
      return { ok: false, detail: `record ${i} has kind ${kind}` };
    }
  }
  return { ok: true, covered, records };
}
