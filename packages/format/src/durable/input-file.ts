import { constants, type Stats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { match } from "ts-pattern";
import { unmatched } from "../unreachable.js";
import { describeIoError } from "./io-text.js";
import { messageOf } from "./sync.js";
import { FaultError } from "../fault-error.js";

/**
 * Reading a whole file a user names (a Policy Set, a trust store, an index), bounded: a
 * device, FIFO or directory is refused by type before a byte is read, a regular file by
 * size, and no more than the limit is ever read even when the file grows meanwhile. A file
 * read whole without this can take the process's memory (`--policy /dev/zero`) or block it
 * for ever (a FIFO nobody writes).
 */

/** What a path is, when it is not a regular file. */
export type FileKind = "directory" | "fifo" | "character_device" | "block_device" | "socket" | "other";

/** Why a file a user named was refused before it was read whole (SPEC §18). */
export type InputFileFault =
  /** A device, FIFO, directory or socket: refused by type, before a byte is read. */
  | { readonly code: "not_regular"; readonly path: string; readonly kind: FileKind }
  /** A regular file over the limit for what it holds (a Policy Set: 1 MiB). */
  | { readonly code: "too_large"; readonly path: string; readonly size: number; readonly limit: number };

/** An input refused for what it is. Its message, for after the path: `read <path>: <message>` (SPEC §18). */
export class InputFileError extends FaultError<InputFileFault> {
  constructor(fault: InputFileFault) {
    super("InputFileError", fault, describeInputFileFault);
  }
}

/** The words of a fault, for after `read <path>: `, as the CLI prints them. */
function describeInputFileFault(fault: InputFileFault): string {
  return match(fault)
    .with({ code: "not_regular" }, (f) => `not a regular file (${describeFileKind(f.kind)})`)
    .with({ code: "too_large" }, (f) => `${f.size} bytes, over the limit of ${f.limit} bytes`)
    .exhaustive(unmatched);
}

/** `a directory`, `a FIFO (named pipe)`, ...: for `<path> is <this>`. */
export function describeFileKind(kind: FileKind): string {
  return KIND_TEXT[kind];
}

const KIND_TEXT: Readonly<Record<FileKind, string>> = {
  directory: "a directory",
  fifo: "a FIFO (named pipe)",
  character_device: "a character device",
  block_device: "a block device",
  socket: "a socket",
  other: "not a file",
};

/** What `info` describes: a regular file, or the kind of thing that is not one. */
export function kindOf(info: Stats): FileKind | "file" {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  if (info.isFIFO()) return "fifo";
  if (info.isCharacterDevice()) return "character_device";
  if (info.isBlockDevice()) return "block_device";
  if (info.isSocket()) return "socket";
  return "other";
}

/**
 * The bytes of the regular file at `path`, at most `limit` of them. Throws
 * {@link InputFileError} for a path that is no regular file or is larger than `limit`, and
 * the file system's error (ENOENT, ELOOP, EACCES...) as it is.
 */
export async function readInputFile(path: string, limit: number): Promise<Buffer> {
  // stat before open: opening a FIFO for reading blocks until a writer comes.
  checkRegular(path, await stat(path), limit);
  // O_NONBLOCK: if the path was swapped for a FIFO since, open returns at once.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    checkRegular(path, info, limit);
    return await readAtMost(handle, path, info.size, limit);
  } finally {
    await handle.close();
  }
}

/**
 * The JSON value of the regular file at `path` (at most `limit` bytes), or why there is none:
 * the read's error in words, or `not JSON: ...`. For a file a user hands a command, whose
 * fault names it: a server's tools list, a vectors manifest.
 */
export async function readJsonFile(
  path: string,
  limit: number,
): Promise<{ readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly detail: string }> {
  let text: string;
  try {
    text = (await readInputFile(path, limit)).toString("utf8");
  } catch (error) {
    return { ok: false, detail: describeIoError(error) };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, detail: `not JSON: ${messageOf(error)}` };
  }
}

function checkRegular(path: string, info: Stats, limit: number): void {
  const kind = kindOf(info);
  if (kind !== "file") throw new InputFileError({ code: "not_regular", path, kind });
  if (info.size > limit) throw new InputFileError({ code: "too_large", path, size: info.size, limit });
}

/** Reads until end of file, refusing once more than `limit` bytes came (the file grew). */
async function readAtMost(handle: FileHandle, path: string, size: number, limit: number): Promise<Buffer> {
  let buffer = Buffer.allocUnsafe(Math.min(limit + 1, Math.max(size + 1, 4096)));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) throw new InputFileError({ code: "too_large", path, size: length, limit });
      const grown = Buffer.allocUnsafe(Math.min(limit + 1, buffer.length * 2));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) return buffer.subarray(0, length);
    length += bytesRead;
  }
}
