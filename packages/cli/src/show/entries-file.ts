import { readRecord } from "@aegis/format/internal";
import { entriesOf, type Entry } from "./entries.js";

/**
 * The entries of the record file at `path` (`entriesOf` over its rows, read as the
 * verifier reads them), one row in memory at a time.
 */
export function entries(path: string, breakLine: number | undefined): AsyncGenerator<Entry> {
  return entriesOf(readRecord(path, { canonical: true }), breakLine);
}
