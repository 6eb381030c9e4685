import { mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";

/** Read exactly `into.length` bytes at `position`: a single read may return fewer. */
export async function readFully(handle: FileHandle, into: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new Error("the file shrank while it was read");
    done += bytesRead;
  }
}

/** fsync a directory, so that a file created or renamed in it survives a crash. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
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
    const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || dirname(directory) === directory) throw error;
    await makeDirectories(dirname(directory));
    await mkdir(directory).catch((again: unknown) => {
      if (!(typeof again === "object" && again !== null && "code" in again && again.code === "EEXIST")) throw again;
    });
  }
}
