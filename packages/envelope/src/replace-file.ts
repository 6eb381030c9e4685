import { open, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDirectory } from "./sync.js";

/**
 * Put `bytes` at `path` so that a crash leaves the old file or the new one, never half of
 * one: a temporary file, synced, renamed over `path`, then the directory synced.
 */
export async function replaceFileDurably(path: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${path}.tmp`;
  const handle = await open(temporary, "w", 0o644);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path).catch(async (error: unknown) => {
    await unlink(temporary).catch(() => undefined);
    throw error;
  });
  await syncDirectory(dirname(path));
}
