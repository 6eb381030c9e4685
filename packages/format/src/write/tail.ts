import type { FileHandle } from "node:fs/promises";
import type { LineHash } from "../wire/digest.js";
import { readFully } from "../durable/files.js";
import { readRow, unreadFinalRow } from "../wire/row-read.js";
import { readRows } from "../wire/row-file.js";
import { MAX_ROW_BYTES } from "../wire/row-splitter.js";
import { isBlank } from "../wire/text.js";

/** What the end of an existing record file holds, as a writer must know it before appending. */
export type FileTail =
  | { readonly code: "empty" }
  /** The last non-blank row hashes; a new Session's `open` back-references it. */
  | { readonly code: "line"; readonly lineHash: LineHash; readonly endsWithNewline: boolean }
  /** The last non-blank row does not parse: a torn write (SPEC §8.2 step 1). Never append onto it. */
  | { readonly code: "torn"; readonly offset: number; readonly length: number; readonly detail: string }
  /**
   * The last non-blank row parses but has no canonical form: the verifier calls it Tampered
   * (`malformed_line`, `detail`), so it is evidence, neither appended onto nor cut off.
   */
  | { readonly code: "tampered"; readonly offset: number; readonly length: number; readonly detail: string }
  | { readonly code: "too_long"; readonly offset: number };

/**
 * Find and judge the last non-blank row by reading backwards from the end, so opening a
 * file of any size costs one row's worth of reading.
 */
export async function readFileTail(handle: FileHandle, size: number): Promise<FileTail> {
  let window = 1 << 16;
  for (;;) {
    const start = Math.max(0, size - window);
    const bytes = Buffer.alloc(size - start);
    await readFully(handle, bytes, start);
    const found = lastRow(bytes, start === 0);
    if (found !== undefined) {
      if (found === "none") return { code: "empty" };
      const offset = start + found.from;
      return judge(bytes.subarray(found.from, found.to), offset, bytes[bytes.length - 1] === 0x0a);
    }
    if (window > MAX_ROW_BYTES + 2) return { code: "too_long", offset: start };
    window *= 4;
  }
}

/**
 * The last non-blank row in `bytes` as [from, to) without its `\r`, "none" when every row
 * is blank and the window reaches the file's start, undefined when the window is too
 * small to be sure where that row starts.
 */
function lastRow(bytes: Buffer, atFileStart: boolean): { from: number; to: number } | "none" | undefined {
  let end = bytes.length;
  for (;;) {
    const rowEnd = end > 0 && bytes[end - 1] === 0x0a ? end - 1 : end;
    const from = rowEnd === 0 ? 0 : bytes.lastIndexOf(0x0a, rowEnd - 1) + 1;
    if (from === 0 && !atFileStart) return undefined;
    const to = rowEnd > from && bytes[rowEnd - 1] === 0x0d ? rowEnd - 1 : rowEnd;
    if (to > from && !isBlank(bytes.toString("utf8", from, to))) return { from, to };
    if (from === 0) return "none";
    end = from;
  }
}

function judge(row: Buffer, offset: number, endsWithNewline: boolean): FileTail {
  if (row.length > MAX_ROW_BYTES) return { code: "too_long", offset };
  const read = readRow(row);
  if (read.ok) return { code: "line", lineHash: read.lineHash, endsWithNewline };
  // The verifier's own rule (SPEC §8.2 steps 1-2), not a copy of it.
  return { code: unreadFinalRow(read), offset, length: row.length, detail: read.detail };
}

/**
 * The `line` the verifier gives the row at byte `offset` (SPEC §1.1: non-blank rows from 1),
 * for a refusal to quote the verifier's words. It reads the file from its start: only a
 * refusal pays for it.
 */
export async function lineAt(path: string, offset: number): Promise<number> {
  let last = 0;
  for await (const row of readRows(path)) {
    last = row.number;
    if (row.offset >= offset) break;
  }
  return last;
}
