import { hash } from "node:crypto";
import { decodeHead, type Head } from "./head.js";
import { FRAME_MAGIC, FRAME_PREFIX_BYTES, MAX_ENTRY_BYTES, MAX_HEAD_BYTES } from "./layout.js";

/**
 * A frame (SPEC §14.3):
 *
 *   0   4  magic AE 65 6E 76
 *   4   4  head length h
 *   8   4  value length v
 *   12  8  check: the first 8 bytes of SHA-256(salt ‖ bytes 0..12 ‖ head)
 *   20  h  head (CBOR, see head.ts)
 *   20+h v value: the verbatim bytes, raw
 *
 * The check covers the lengths and the head, not the value: the value is covered by its
 * own digest, which every read re-computes, so a flipped value byte reads as
 * `digest_mismatch` and the frame around it stays whole. Keeping the value out of the CBOR
 * also spares a 10 MB value a copy through the encoder. The salt is the store's (or
 * pack's) random id, so bytes a caller stored cannot pass for a frame when a reader
 * searches for the next frame after damage.
 */
export function framePrefix(salt: Uint8Array, head: Buffer, valueLength: number): Buffer {
  const out = Buffer.alloc(FRAME_PREFIX_BYTES + head.length);
  FRAME_MAGIC.copy(out, 0);
  out.writeUInt32BE(head.length, 4);
  out.writeUInt32BE(valueLength, 8);
  head.copy(out, FRAME_PREFIX_BYTES);
  out.write(checkOf(salt, out), 12, "hex");
  return out;
}

/**
 * The check of a frame, as 16 hex digits, from its prefix and head laid out as on disk
 * (`frame` holds at least 20 + h bytes). One-shot hashing of one buffer: a Hash object
 * per frame costs several times more, and opening a store without its index checks every
 * frame.
 */
function checkOf(salt: Uint8Array, frame: Uint8Array): string {
  const headLength = uint32At(frame, 4);
  const input = Buffer.allocUnsafe(salt.length + 12 + headLength);
  input.set(salt, 0);
  input.set(frame.subarray(0, 12), salt.length);
  input.set(frame.subarray(FRAME_PREFIX_BYTES, FRAME_PREFIX_BYTES + headLength), salt.length + 12);
  return hash("sha256", input, "hex").slice(0, 16);
}

/** The lengths a frame prefix declares, or why it is not a frame prefix. */
export type Prefix = { readonly ok: true; readonly headLength: number; readonly valueLength: number } | { readonly ok: false; readonly detail: string };

export function readPrefix(prefix: Uint8Array): Prefix {
  // Byte by byte: Buffer#equals costs more than the comparison for 4 bytes, once per frame.
  if (
    prefix.length < FRAME_PREFIX_BYTES ||
    prefix[0] !== FRAME_MAGIC[0] ||
    prefix[1] !== FRAME_MAGIC[1] ||
    prefix[2] !== FRAME_MAGIC[2] ||
    prefix[3] !== FRAME_MAGIC[3]
  ) {
    return { ok: false, detail: "no frame magic" };
  }
  const headLength = uint32At(prefix, 4);
  const valueLength = uint32At(prefix, 8);
  if (headLength === 0 || headLength > MAX_HEAD_BYTES) return { ok: false, detail: `head length ${headLength} is out of range` };
  if (valueLength > MAX_ENTRY_BYTES) return { ok: false, detail: `value length ${valueLength} is out of range` };
  return { ok: true, headLength, valueLength };
}

/**
 * A frame's prefix and head (`frame`: the 20 + h bytes from the frame's start, lengths
 * already read by {@link readPrefix}) that check against `salt`, decoded; or why not.
 */
export function readHead(
  salt: Uint8Array,
  frame: Buffer,
  headLength: number,
  valueLength: number,
): { readonly ok: true; readonly head: Head } | { readonly ok: false; readonly detail: string } {
  if (checkOf(salt, frame) !== frame.toString("hex", 12, 20)) return { ok: false, detail: "frame check does not match" };
  const decoded = decodeHead(frame.subarray(FRAME_PREFIX_BYTES, FRAME_PREFIX_BYTES + headLength));
  if (!decoded.ok) return decoded;
  if (decoded.head.kind === "tombstone" && valueLength !== 0) return { ok: false, detail: "a tombstone frame carries a value" };
  return decoded;
}

function uint32At(bytes: Uint8Array, at: number): number {
  return (((bytes[at] ?? 0) << 24) | ((bytes[at + 1] ?? 0) << 16) | ((bytes[at + 2] ?? 0) << 8) | (bytes[at + 3] ?? 0)) >>> 0;
}
