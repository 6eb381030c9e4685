import { open, type FileHandle } from "node:fs/promises";
import { openRegularFile } from "../durable/regular-file.js";
import { MAX_ROW_BYTES, RowSplitter, type Row } from "./row-splitter.js";

/**
 * The rows of a file, read into one buffer again and again: a fresh buffer per chunk is
 * garbage the collector may take its time over, and memory would follow the file's size.
 * A row's bytes are valid until the next row is requested. `onRead` is told how many
 * bytes have been read so far.
 *
 * @throws the file system's error when the file cannot be opened or read.
 */
export async function* readRows(path: string, limit: number = MAX_ROW_BYTES, onRead?: (bytes: number) => void): AsyncGenerator<Row> {
  for await (const rows of readRowChunks(path, limit, onRead)) yield* rows;
}

/**
 * {@link readRows}, a read's rows at a time: a reader of millions of rows pays one await per
 * read, not per row. The rows' bytes are valid until the next list is requested. With
 * `regularOnly` (a file found by walking a directory, which no one named as a pipe), a path
 * that is not a regular file is refused (`InputFileError`) without blocking (SPEC §18).
 */
export async function* readRowChunks(
  path: string,
  limit: number = MAX_ROW_BYTES,
  onRead?: (bytes: number) => void,
  regularOnly = false,
): AsyncGenerator<readonly Row[]> {
  const splitter = new RowSplitter(limit);
  const buffer = Buffer.allocUnsafe(1 << 18);
  let handle: FileHandle | undefined;
  let total = 0;
  try {
    handle = regularOnly ? await openRegularFile(path) : await open(path, "r");
    for (;;) {
      // Read from the current position, not at an offset: a pipe or /dev/stdin cannot seek.
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      onRead?.(total);
      yield [...splitter.push(buffer.subarray(0, bytesRead))];
    }
  } finally {
    await handle?.close().catch(() => undefined);
  }
  yield [...splitter.end()];
}
