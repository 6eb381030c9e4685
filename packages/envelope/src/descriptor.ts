import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { EnvelopeError, io } from "./errors.js";
import { sha256Of } from "./hash.js";
import { InputFileError, readInputFile, replaceFileDurably } from "@aegis/format/durable";
import { DESCRIPTOR_BYTES, DESCRIPTOR_FILE, DESCRIPTOR_MAGIC, FORMAT_VERSION, SALT_BYTES, SEGMENT_HEADER_BYTES, SEGMENT_MAGIC } from "./layout.js";

/**
 * The store descriptor, `<dir>/aegis-envelope` (SPEC §14.2):
 *
 *   0   8  "AEGISENV"
 *   8   2  version (1)
 *   10  6  zero
 *   16  16 store id: random, the salt of every frame check in the store
 *   32  32 SHA-256(bytes 0..32)
 */
function encodeDescriptor(salt: Uint8Array): Buffer {
  const out = Buffer.alloc(DESCRIPTOR_BYTES);
  out.write(DESCRIPTOR_MAGIC, 0, "latin1");
  out.writeUInt16BE(FORMAT_VERSION, 8);
  Buffer.from(salt).copy(out, 16);
  sha256Of(out.subarray(0, 32)).copy(out, 32);
  return out;
}

/** The store id of the store in `dir`; refuses a descriptor that is damaged or of another version. */
export async function readDescriptor(dir: string): Promise<Buffer> {
  const path = join(dir, DESCRIPTOR_FILE);
  // Read no more than a descriptor and a little: a device or a huge file is no descriptor.
  const bytes = await io(path, () => readInputFile(path, 4096)).catch((error: unknown) => {
    if (error instanceof EnvelopeError && error.cause instanceof InputFileError)
      throw new EnvelopeError({ code: "damaged_descriptor", path, detail: error.cause.message });
    throw error;
  });
  if (bytes.length < 10 || bytes.toString("latin1", 0, 8) !== DESCRIPTOR_MAGIC) {
    throw new EnvelopeError({ code: "not_an_envelope", path, detail: `the descriptor does not start with "${DESCRIPTOR_MAGIC}"` });
  }
  const version = bytes.readUInt16BE(8);
  if (version !== FORMAT_VERSION) throw new EnvelopeError({ code: "unsupported_version", path, version });
  if (bytes.length !== DESCRIPTOR_BYTES)
    throw new EnvelopeError({ code: "damaged_descriptor", path, detail: `${bytes.length} bytes, not ${DESCRIPTOR_BYTES}` });
  if (!sha256Of(bytes.subarray(0, 32)).equals(bytes.subarray(32)))
    throw new EnvelopeError({ code: "damaged_descriptor", path, detail: "its checksum does not match" });
  return Buffer.from(bytes.subarray(16, 16 + SALT_BYTES));
}

/** Write a new descriptor: a temporary file, synced, renamed into place, directory synced. */
export async function createDescriptor(dir: string, id?: Uint8Array): Promise<Buffer> {
  const path = join(dir, DESCRIPTOR_FILE);
  if (id !== undefined && id.length !== SALT_BYTES) throw new RangeError(`a store id is ${SALT_BYTES} bytes`);
  const salt = id === undefined ? randomBytes(SALT_BYTES) : Buffer.from(id);
  await io(path, () => replaceFileDurably(path, encodeDescriptor(salt)));
  return salt;
}

/**
 * A segment's header (SPEC §14.3):
 *
 *   0   8  "AEGISSEG"
 *   8   2  version (1)
 *   10  2  zero
 *   12  4  segment number
 *   16  16 store id
 */
export function encodeSegmentHeader(segment: number, salt: Uint8Array): Buffer {
  const out = Buffer.alloc(SEGMENT_HEADER_BYTES);
  out.write(SEGMENT_MAGIC, 0, "latin1");
  out.writeUInt16BE(FORMAT_VERSION, 8);
  out.writeUInt32BE(segment, 12);
  Buffer.from(salt).copy(out, 16);
  return out;
}

/** Why a segment header is not the one its name and store say, or undefined. */
export function segmentHeaderFault(header: Buffer, segment: number, salt: Uint8Array): string | undefined {
  const expected = encodeSegmentHeader(segment, salt);
  if (header.equals(expected)) return undefined;
  if (header.toString("latin1", 0, 8) !== SEGMENT_MAGIC) return `no "${SEGMENT_MAGIC}" magic`;
  if (header.readUInt16BE(8) !== FORMAT_VERSION) return `version ${header.readUInt16BE(8)}, not 1`;
  if (header.readUInt32BE(12) !== segment) return `it names segment ${header.readUInt32BE(12)}`;
  if (!header.subarray(16).equals(Buffer.from(salt))) return "it names another store";
  return "reserved bytes are not zero";
}
