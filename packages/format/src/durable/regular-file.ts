import { close, closeSync, constants, fstat, fstatSync, open as openFd, openSync, statSync, type Stats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { InputFileError, kindOf } from "./input-file.js";

/**
 * Opening a file aegis found itself (a segment, a pack, a lock, a record found by walking a
 * directory; `readInputFile` does the same for files read whole, such as an index): never a
 * FIFO, socket, device or directory (SPEC §18). Opening a FIFO
 * for reading blocks until a writer comes, and reading one opened for writing too blocks
 * until someone writes: a FIFO planted in a store would hang every reader of it for ever.
 *
 * The path is stat'ed first, so that a device is never opened at all (opening some has
 * effects); then opened with O_NONBLOCK, so that a path swapped for a FIFO meanwhile does
 * not block the open, and the descriptor itself is checked with fstat, which no later swap
 * can change. O_NONBLOCK changes nothing for a regular file's reads and writes. Symbolic
 * links are followed, as they were before, and their target checked.
 */

/** `read`: O_RDONLY; `write`: O_RDWR, for a file that is read and written in place. */
export type RegularAccess = "read" | "write";

function flagsOf(access: RegularAccess): number {
  return (access === "read" ? constants.O_RDONLY : constants.O_RDWR) | constants.O_NONBLOCK;
}

/** Throws {@link InputFileError} `not_regular` for anything but a regular file. */
function checkKind(path: string, info: Stats): void {
  const kind = kindOf(info);
  if (kind !== "file") throw new InputFileError({ code: "not_regular", path, kind });
}

/**
 * Open the regular file at `path`, refusing any other kind of file without blocking.
 *
 * @throws InputFileError `not_regular`; the file system's error (ENOENT, EACCES...) as it is.
 */
export async function openRegularFile(path: string, access: RegularAccess = "read"): Promise<FileHandle> {
  checkKind(path, await stat(path));
  const handle = await open(path, flagsOf(access));
  try {
    checkKind(path, await handle.stat());
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** {@link openRegularFile}, giving a bare descriptor (a cache of many, read with `fs.read`). */
export async function openRegularFd(path: string, access: RegularAccess = "read"): Promise<number> {
  checkKind(path, await stat(path));
  const fd = await new Promise<number>((resolve, reject) =>
    openFd(path, flagsOf(access), (error, opened) => (error === null ? resolve(opened) : reject(error))),
  );
  try {
    checkKind(path, await new Promise<Stats>((resolve, reject) => fstat(fd, (error, info) => (error === null ? resolve(info) : reject(error)))));
    return fd;
  } catch (error) {
    await new Promise<void>((resolve) => close(fd, () => resolve()));
    throw error;
  }
}

/** {@link openRegularFd}, on this thread. */
export function openRegularFileSync(path: string, access: RegularAccess = "read"): number {
  checkKind(path, statSync(path));
  const fd = openSync(path, flagsOf(access));
  try {
    checkKind(path, fstatSync(fd));
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
