import { close, closeSync, read, readSync } from "node:fs";
import { openRegularFd } from "@aegis/format/durable";
import { join } from "node:path";
import type { Location } from "./catalog.js";
import { ioError } from "./errors.js";
import { segmentFileName, valueOffsetOf } from "./layout.js";

/** Values up to this size are read on the event loop: one pread costs less than the thread hop. */
const SYNC_READ_BYTES = 64 * 1024;
/** Open segment files kept for reading; the least recently used idle one is closed beyond this. */
const OPEN_LIMIT = 64;

interface Slot {
  fd: number;
  users: number;
  pinned: boolean;
}

/**
 * Read access to a store's segments by number: a small cache of open descriptors, so a
 * store of many segments does not hold one descriptor per segment, and no descriptor is
 * closed under a read that uses it.
 */
export class SegmentFiles {
  private readonly slots = new Map<number, Slot>();
  private readonly opening = new Map<number, Promise<Slot>>();

  constructor(private readonly dir: string) {}

  /** Serve reads of `segment` from `fd`, which the caller owns (the writer's active segment). */
  pin(segment: number, fd: number): void {
    this.slots.set(segment, { fd, users: 0, pinned: true });
  }

  /** Hand a pinned descriptor over: the cache closes it when it is idle and evicted, or on close. */
  unpin(segment: number): void {
    const slot = this.slots.get(segment);
    if (slot !== undefined) slot.pinned = false;
    this.evict();
  }

  /** The bytes of an entry's value, as they are on disk now (fewer if the file was cut short). */
  async readValue(location: Location): Promise<Uint8Array> {
    const path = join(this.dir, segmentFileName(location.segment));
    const slot = await this.acquire(location.segment, path);
    try {
      const bytes = Buffer.allocUnsafeSlow(location.size);
      const position = valueOffsetOf(location.frame);
      const got = location.size <= SYNC_READ_BYTES ? readFullySync(slot.fd, bytes, position) : await readFully(slot.fd, bytes, position);
      return got === bytes.length ? bytes : bytes.subarray(0, got);
    } catch (error) {
      throw ioError(path, error);
    } finally {
      slot.users--;
    }
  }

  private async acquire(segment: number, path: string): Promise<Slot> {
    const cached = this.slots.get(segment);
    if (cached !== undefined) {
      // Most recently used last.
      this.slots.delete(segment);
      this.slots.set(segment, cached);
      cached.users++;
      return cached;
    }
    let opening = this.opening.get(segment);
    if (opening === undefined) {
      // Never a FIFO put in the segment's place since the store was opened (SPEC §18).
      opening = openRegularFd(path).then((fd) => {
        const slot: Slot = { fd, users: 0, pinned: false };
        this.slots.set(segment, slot);
        this.evict();
        return slot;
      });
      const forget = (): void => void this.opening.delete(segment);
      opening.then(forget, forget);
      this.opening.set(segment, opening);
    }
    let slot: Slot;
    try {
      slot = await opening;
    } catch (error) {
      throw ioError(path, error);
    }
    slot.users++;
    return slot;
  }

  private evict(): void {
    if (this.slots.size <= OPEN_LIMIT) return;
    for (const [segment, slot] of this.slots) {
      if (this.slots.size <= OPEN_LIMIT) return;
      if (slot.pinned || slot.users > 0) continue;
      this.slots.delete(segment);
      close(slot.fd, () => undefined);
    }
  }

  /** Close every descriptor this cache opened (not pinned ones). */
  close(): void {
    for (const slot of this.slots.values()) if (!slot.pinned) closeSync(slot.fd);
    this.slots.clear();
  }
}

function readFullySync(fd: number, into: Buffer, position: number): number {
  let done = 0;
  while (done < into.length) {
    const n = readSync(fd, into, done, into.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

async function readFully(fd: number, into: Buffer, position: number): Promise<number> {
  let done = 0;
  while (done < into.length) {
    const n = await new Promise<number>((resolve, reject) =>
      read(fd, into, done, into.length - done, position + done, (error, bytesRead) => (error === null ? resolve(bytesRead) : reject(error))),
    );
    if (n === 0) break;
    done += n;
  }
  return done;
}
