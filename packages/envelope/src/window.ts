import type { FileHandle } from "node:fs/promises";

const WINDOW_BYTES = 1 << 20;

/**
 * Reads a file front to back through a 1 MiB window, so a scan makes one read per MiB
 * rather than two per frame. Views it returns are valid until the next call.
 */
export class WindowReader {
  private window: Buffer = Buffer.alloc(0);
  private start = 0;

  constructor(
    private readonly handle: FileHandle,
    /** Reads never go past this offset (the file's size when the scan began). */
    readonly end: number,
  ) {}

  /** Up to `length` bytes at `position`: fewer only at `end`, or where the file shrank. */
  async read(position: number, length: number): Promise<Buffer> {
    const want = Math.max(0, Math.min(length, this.end - position));
    if (position >= this.start && position + want <= this.start + this.window.length) {
      return this.window.subarray(position - this.start, position - this.start + want);
    }
    const size = Math.min(Math.max(want, WINDOW_BYTES), this.end - position);
    const buffer = Buffer.allocUnsafe(size);
    const got = await readAt(this.handle, buffer, position);
    this.window = buffer.subarray(0, got);
    this.start = position;
    return this.window.subarray(0, Math.min(want, got));
  }
}

/** Fill `into` from `position`; the count read, short only at the end of the file. */
export async function readAt(handle: FileHandle, into: Buffer, position: number): Promise<number> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}
