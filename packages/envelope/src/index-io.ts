import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { encodeIndex, type IndexRecord } from "./index-file.js";
import { indexFileName } from "./layout.js";
import { syncDirectory } from "./sync.js";

/**
 * Write a segment's index (SPEC §14.4): a temporary file, synced, renamed over the old
 * index, directory synced. A crash leaves the old index or the new one, never half of one,
 * and an index that does not check is scanned around anyway.
 */
export async function writeIndexFile(dir: string, salt: Uint8Array, segment: number, covered: number, records: readonly IndexRecord[]): Promise<void> {
  const path = join(dir, indexFileName(segment));
  const temporary = `${path}.tmp`;
  const handle = await open(temporary, "w", 0o644);
  try {
    await handle.writeFile(encodeIndex(salt, segment, covered, records));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path).catch(async (error: unknown) => {
    await unlink(temporary).catch(() => undefined);
    throw error;
  });
  await syncDirectory(dir);
}
