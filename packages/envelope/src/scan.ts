import { createHash } from "node:crypto";
import type { Head } from "./head.js";
import { FRAME_MAGIC, FRAME_PREFIX_BYTES, valueOffsetOf } from "./layout.js";
import { readHead, readPrefix } from "./frame.js";
import type { WindowReader } from "./window.js";

/** What a scan of frames meets, in file order (SPEC §14.5, §14.7). */
export type ScanEvent =
  | {
      readonly code: "frame";
      readonly offset: number;
      readonly end: number;
      readonly head: Head;
      readonly valueLength: number;
      /** With `hashValues`, the SHA-256 of an entry's value as read. */
      readonly found?: string;
    }
  /** Bytes that are no frame, followed by a whole frame at `offset + length`. */
  | { readonly code: "damaged"; readonly offset: number; readonly length: number; readonly detail: string }
  /** Bytes that are no frame, up to the end: nothing whole follows them. */
  | { readonly code: "torn"; readonly offset: number; readonly length: number; readonly detail: string };

type FrameAt =
  | { readonly whole: true; readonly head: Head; readonly valueLength: number; readonly end: number }
  /** `cutShort`: the frame's bytes stop before its lengths say it ends (a write cut short). */
  | { readonly whole: false; readonly detail: string; readonly cutShort: boolean };

/**
 * Walk the frames in `[start, end)`. A frame that is not whole is damage when a whole
 * frame follows it somewhere (found by searching for the next frame magic whose check
 * holds), and a torn tail when none does: a write cut short can only be the last thing in
 * a file, and damage in the middle never hides the frames after it.
 */
export async function* scanFrames(
  reader: WindowReader,
  salt: Uint8Array,
  start: number,
  end: number,
  options: { readonly hashValues: boolean },
): AsyncGenerator<ScanEvent> {
  let position = start;
  while (position < end) {
    const at = await frameAt(reader, salt, position, end);
    if (at.whole) {
      const found = options.hashValues && at.head.kind === "entry" ? await hashRange(reader, valueOffsetOf(position), at.valueLength) : undefined;
      yield { code: "frame", offset: position, end: at.end, head: at.head, valueLength: at.valueLength, ...(found === undefined ? {} : { found }) };
      position = at.end;
      continue;
    }
    const next = await nextWholeFrame(reader, salt, position + 1, end);
    if (next === undefined) {
      // Torn only when a write was cut short: bytes that stop early, or never written (zeros).
      // A frame of full length whose check fails is damage, and cutting it could lose an
      // acknowledged entry (SPEC §14.5, §14.7).
      const torn = at.cutShort || (await allZero(reader, position, end));
      yield { code: torn ? "torn" : "damaged", offset: position, length: end - position, detail: at.detail };
      return;
    }
    yield { code: "damaged", offset: position, length: next - position, detail: at.detail };
    position = next;
  }
}

async function frameAt(reader: WindowReader, salt: Uint8Array, position: number, end: number): Promise<FrameAt> {
  // Views into the reader's window, used before the next read replaces it.
  const prefix = await reader.read(position, FRAME_PREFIX_BYTES);
  if (prefix.length < FRAME_PREFIX_BYTES) return { whole: false, detail: "a frame prefix cut short by the end of the file", cutShort: true };
  const lengths = readPrefix(prefix);
  if (!lengths.ok) return { whole: false, detail: lengths.detail, cutShort: false };
  const frameEnd = position + FRAME_PREFIX_BYTES + lengths.headLength + lengths.valueLength;
  const headEnd = position + FRAME_PREFIX_BYTES + lengths.headLength;
  if (headEnd > end) return { whole: false, detail: "a frame head cut short by the end of the file", cutShort: true };
  const frame = await reader.read(position, FRAME_PREFIX_BYTES + lengths.headLength);
  const head = readHead(salt, frame, lengths.headLength, lengths.valueLength);
  // The check covers the lengths: a frame whose check fails was damaged, whatever length it
  // claims; only a frame whose check holds and whose value stops early was cut short.
  if (!head.ok) return { whole: false, detail: head.detail, cutShort: false };
  if (frameEnd > end) return { whole: false, detail: `a frame of ${frameEnd - position} bytes runs past the end of the file`, cutShort: true };
  return { whole: true, head: head.head, valueLength: lengths.valueLength, end: frameEnd };
}

async function allZero(reader: WindowReader, from: number, end: number): Promise<boolean> {
  for (let position = from; position < end;) {
    const chunk = await reader.read(position, Math.min(1 << 20, end - position));
    if (chunk.length === 0) return true;
    for (const byte of chunk) if (byte !== 0) return false;
    position += chunk.length;
  }
  return true;
}

async function nextWholeFrame(reader: WindowReader, salt: Uint8Array, from: number, end: number): Promise<number | undefined> {
  const CHUNK = 1 << 20;
  let base = from;
  while (base < end) {
    const chunk = Buffer.from(await reader.read(base, CHUNK));
    if (chunk.length < FRAME_MAGIC.length) return undefined;
    for (let i = chunk.indexOf(FRAME_MAGIC); i >= 0; i = chunk.indexOf(FRAME_MAGIC, i + 1)) {
      if ((await frameAt(reader, salt, base + i, end)).whole) return base + i;
    }
    // Overlap by the magic's length less one, so a magic across the boundary is seen.
    base += chunk.length - (FRAME_MAGIC.length - 1);
  }
  return undefined;
}

async function hashRange(reader: WindowReader, position: number, length: number): Promise<string> {
  const h = createHash("sha256");
  let done = 0;
  while (done < length) {
    const piece = await reader.read(position + done, Math.min(1 << 20, length - done));
    if (piece.length === 0) break;
    h.update(piece);
    done += piece.length;
  }
  return h.digest("hex");
}
