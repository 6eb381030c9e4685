import { createHash, type Hash } from "node:crypto";

/**
 * Newline framing (SPEC §17.1). A frame is the bytes up to, and not including, the `\n`
 * that ends it. Every byte inside a frame is kept as it came, a `\r` before the `\n`
 * included, whatever its encoding: a frame is bytes, never text, so one byte that is not
 * UTF-8 cannot end a stream or swallow what follows it.
 */

/** What a stream of bytes yields: whole frames, and frames over the bound, skipped. */
export type FrameEvent =
  | { readonly code: "frame"; readonly bytes: Buffer }
  /** A frame longer than the bound: its bytes were counted and hashed, and not kept (SPEC §17.1). */
  | { readonly code: "oversize"; readonly bytes: number; readonly sha256: string };

/** 256 MiB: above any tool result we have seen, below what one JavaScript string can hold. */
export const DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into frames. Memory is bounded by the longest frame kept: a frame
 * that grows past `maxFrameBytes` is dropped as it arrives and reported by its length.
 */
export class FrameSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  /** Inside an over-long frame: its bytes so far, counted and hashed, not kept (SPEC §17.1). */
  private over: { bytes: number; readonly hash: Hash } | undefined;

  constructor(private readonly maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES) {}

  /** The frames `chunk` completes, in order. */
  push(chunk: Buffer): FrameEvent[] {
    const events: FrameEvent[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) break;
      events.push(this.complete());
      start = newline + 1;
    }
    return events;
  }

  /** The last frame, when the stream ended without a `\n` after it. */
  end(): FrameEvent | undefined {
    if (this.over === undefined && this.held === 0 && this.parts.length === 0) return undefined;
    return this.complete();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.over !== undefined) {
      this.over.bytes += piece.length;
      this.over.hash.update(piece);
      return;
    }
    if (this.held + piece.length > this.maxFrameBytes) {
      const hash = createHash("sha256");
      for (const part of this.parts) hash.update(part);
      hash.update(piece);
      this.over = { bytes: this.held + piece.length, hash };
      this.parts = [];
      this.held = 0;
      return;
    }
    this.parts.push(piece);
    this.held += piece.length;
  }

  private complete(): FrameEvent {
    if (this.over !== undefined) {
      const { bytes, hash } = this.over;
      this.over = undefined;
      return { code: "oversize", bytes, sha256: hash.digest("hex") };
    }
    const parts = this.parts;
    this.parts = [];
    this.held = 0;
    // One piece is the common case: keep it without a copy. It points into the chunk, which
    // the caller must not reuse (Node's streams never do).
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    return { code: "frame", bytes };
  }
}

/** A frame that is empty or only ASCII white space carries no message, and is dropped. */
export function isBlankFrame(frame: Uint8Array): boolean {
  for (const byte of frame) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) return false;
  }
  return true;
}
