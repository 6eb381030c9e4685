import { join } from "node:path";
import { encodeIndex, type IndexRecord } from "./index-file.js";
import { indexFileName } from "./layout.js";
import { replaceFileDurably } from "@aegis/format/durable";

/**
 * Write a segment's index (SPEC §14.4): a temporary file, synced, renamed over the old
 * index, directory synced. A crash leaves the old index or the new one, never half of one,
 * and an index that does not check is scanned around anyway.
 */
export async function writeIndexFile(dir: string, salt: Uint8Array, segment: number, covered: number, records: readonly IndexRecord[]): Promise<void> {
  await replaceFileDurably(join(dir, indexFileName(segment)), encodeIndex(salt, segment, covered, records));
}
