import { mkdir, open, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { errnoOf, syncDirectory } from "./sync.js";

/**
 * The mode of every file aegis creates that holds or guards evidence or secrets: a record,
 * its lock, an Envelope's files, a pack, a checkpoint, a proof, a key (SPEC §13.2, §14.2,
 * ADR 0017). Passed to `open` with `O_CREAT`, so the umask can only take bits away: owner-only
 * whatever the umask is. A file that already exists keeps its mode.
 */
export const PRIVATE_FILE_MODE = 0o600;
/** The mode of every directory aegis creates for such files (an Envelope store, a proofs directory). */
const PRIVATE_DIRECTORY_MODE = 0o700;

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
 * Create `directory` and its missing parents, one level at a time, each owner-only
 * (`PRIVATE_DIRECTORY_MODE`); one that exists is left as it is. (Node 20's
 * `mkdir({ recursive: true })` never returns under some paths, such as `/proc/x`.)
 */
export async function makeDirectories(directory: string): Promise<void> {
  try {
    await mkdir(directory, PRIVATE_DIRECTORY_MODE);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || dirname(directory) === directory) throw error;
    await makeDirectories(dirname(directory));
    await mkdir(directory, PRIVATE_DIRECTORY_MODE).catch((again: unknown) => {
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
 * `replaceFileDurably` for a file made in parts (a page of 100 MB is never held whole):
 * each part is written as it comes; a part that throws leaves `path` as it was. A new file
 * is owner-only (`PRIVATE_FILE_MODE`); a file replaced keeps its mode.
 */
export async function replaceFileFromParts(path: string, parts: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): Promise<void> {
  const temporary = `${path}.tmp`;
  const handle = await createTemporary(temporary);
  try {
    // writeFile writes all of a part, from where the last one ended.
    for await (const part of parts) await handle.writeFile(part);
    // What the user made of the file before (chmod 644 for a shipper) stays so.
    const before = await stat(path).catch(() => undefined);
    if (before?.isFile() === true) await handle.chmod(before.mode & 0o777);
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

/**
 * A fresh temporary file, owner-only: one a killed writer left is removed first, so that
 * neither its mode nor its kind (a FIFO planted there would block the open) carries over.
 * `wx` creates the file or fails; it never opens what is there, nor follows a link.
 */
async function createTemporary(temporary: string): Promise<FileHandle> {
  for (let attempt = 0; ; attempt++) {
    await unlink(temporary).catch((error: unknown) => {
      if (errnoOf(error) !== "ENOENT") throw error;
    });
    try {
      return await open(temporary, "wx", PRIVATE_FILE_MODE);
    } catch (error) {
      // A replacement of the same path, at the same moment, made it in between: try again.
      if (errnoOf(error) !== "EEXIST" || attempt >= 2) throw error;
    }
  }
}
