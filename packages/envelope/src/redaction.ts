import { openRegularFile } from "@aegis/format/durable";
import { join } from "node:path";
import type { Location } from "./catalog.js";
import { segmentFileName, valueOffsetOf } from "./layout.js";
import { readAt } from "./window.js";

const ZEROS = Buffer.alloc(1 << 20);

/**
 * What redacting a digest answers (SPEC §14.8). `redacted` comes only once the tombstone
 * is durable and the bytes are overwritten on disk and synced.
 */
export type RedactOutcome =
  | { readonly code: "redacted"; readonly digest: string; readonly redactedAt: string; readonly reason: string; readonly removedBytes: number }
  | { readonly code: "already_redacted"; readonly redactedAt: string; readonly reason: string }
  | { readonly code: "missing" }
  | { readonly code: "reason_refused"; readonly detail: string };

/**
 * Overwrite an entry's value with zeros where it lies, and sync the file (SPEC §14.8). In
 * place, not by copying the segment: on a file system that overwrites in place the old
 * blocks are the ones zeroed, rather than freed with the secret still in them.
 */
export async function scrubValue(dir: string, location: Location): Promise<void> {
  const handle = await openRegularFile(join(dir, segmentFileName(location.segment)), "write");
  try {
    const start = valueOffsetOf(location.frame);
    for (let done = 0; done < location.size;) {
      const n = Math.min(ZEROS.length, location.size - done);
      const { bytesWritten } = await handle.write(ZEROS, 0, n, start + done);
      done += bytesWritten;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Whether an entry's value on disk is all zeros already (a redaction that finished). */
export async function isScrubbed(dir: string, location: Location): Promise<boolean> {
  const handle = await openRegularFile(join(dir, segmentFileName(location.segment)));
  try {
    const buffer = Buffer.alloc(Math.min(ZEROS.length, location.size));
    const start = valueOffsetOf(location.frame);
    for (let done = 0; done < location.size;) {
      const n = Math.min(buffer.length, location.size - done);
      const got = await readAt(handle, buffer.subarray(0, n), start + done);
      if (got === 0) return true;
      if (!buffer.subarray(0, got).equals(ZEROS.subarray(0, got))) return false;
      done += got;
    }
    return true;
  } finally {
    await handle.close();
  }
}
