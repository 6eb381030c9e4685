import { MAX_ROW_BYTES } from "./row-splitter.js";
import { readRows } from "./row-file.js";
import { recordRows, type RecordReadOptions, type RecordRow } from "./record-reader.js";

/** The rows of the record file at `path`, in order, one in memory at a time. */
export function readRecord(path: string, options: RecordReadOptions = {}): AsyncGenerator<RecordRow> {
  return recordRows(readRows(path, MAX_ROW_BYTES, options.onRead), options);
}
