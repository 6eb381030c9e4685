import { mkdir, open, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { errnoOf, syncDirectory } from "./sync.js";

/** Read exactly `into.length` bytes at `position`: a single read may return fewer. */
export async function readFully(handle: FileHandle, into: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new Error("the file shrank while it was read");
    done += bytesRead;
  }
}

/**
 * Create `directory` and its missing parents, one level at a time. (Node 20's
 * `mkdir({ recursive: true })` never returns under some paths, such as `/proc/x`.)
 */
export async function makeDirectories(directory: string): Promise<void> {
  try {
    await mkdir(directory);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || dirname(directory) === directory) throw error;
    await makeDirectories(dirname(directory));
    await mkdir(directory).catch((again: unknown) => {
      if (errnoOf(again) !== "EEXIST") throw again;
    });
  }
}

/**
 * Put `bytes` at `path` so that a crash leaves the old file or the new one, never half of
 * one: a temporary file, synced, renamed over `path`, then the directory synced.
 */
export async function replaceFileDurably(path: string, bytes: Uint8Array): Promise<void> {
  await replaceFileFromParts(path, [bytes]);
}

/**
 * {@link replaceFileDurably} for a file made in parts (a page of 100 MB is never held
 * whole): each part is written as it comes; a part that throws leaves `path` as it was.
 */
export async function replaceFileFromParts(path: string, parts: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<void> {
  const temporary = `${path}.tmp`;
  const handle = await open(temporary, "w", 0o644);
  try {
    // writeFile writes all of a part, from where the last one ended.
    for await (const part of parts) await handle.writeFile(part);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  await rename(temporary, path).catch(async (error: unknown) => {
    await unlink(temporary).catch(() => undefined);
    throw error;
  });
  await syncDirectory(dirname(path));
}

/** Whether something is at `path`; false only when nothing is (any other error is thrown). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw error;
  }
}
