import { JsonSyntaxError, isJsonObject, parseJson, type JsonObject, type JsonValue } from "./json.js";
import { readRow } from "./row-read.js";
import { RowSplitter, type Row } from "./row-splitter.js";
import { decodeUtf8 } from "./text.js";

/**
 * Reading a record row by row for what its Lines say (recheck, `show`, the Envelope's list
 * of digests): one way, so that every reader numbers rows, counts Sessions and reads a row
 * the same. Nothing here judges a chain link or a signature: that is the verifier's (§8).
 */
export type RecordRow =
  /** A row that is a JSON object (a Line, or something that means to be one). */
  | {
      readonly code: "object";
      /** 1-based, over the file's non-blank rows (SPEC §1.1). */
      readonly row: number;
      /** Counted over `open` Lines from 0; 0 before the first (SPEC §7). */
      readonly sessionIndex: number;
      /** `line_type` when it is a string. */
      readonly lineType: string | undefined;
      /** `seq` when it is an integer. */
      readonly seq: number | undefined;
      readonly value: JsonObject;
    }
  /** A row that is JSON but not an object: no Line. */
  | { readonly code: "not_an_object"; readonly row: number; readonly sessionIndex: number }
  /** A row that does not parse (or, with `canonical`, has no canonical form); `detail` says why. */
  | { readonly code: "unreadable"; readonly row: number; readonly sessionIndex: number; readonly detail: string }
  /** A row over the row bound (SPEC §13.1): not read. */
  | { readonly code: "too_long"; readonly row: number; readonly sessionIndex: number; readonly length: number; readonly limit: number };

/** How `readRecord` and `readRecordBytes` read rows. */
export interface RecordReadOptions {
  /** Also refuse rows outside the canonical value space (SPEC §3.2), as the verifier does. */
  readonly canonical?: boolean;
  /** Told how many bytes of the file have been read, for progress. */
  readonly onRead?: (bytes: number) => void;
}

/** `readRecord` over a record held in memory. */
export function readRecordBytes(bytes: Uint8Array, options: RecordReadOptions = {}): AsyncGenerator<RecordRow> {
  return recordRows(rowsOf(bytes), options);
}

function* rowsOf(bytes: Uint8Array): Generator<Row> {
  const splitter = new RowSplitter();
  yield* splitter.push(bytes);
  yield* splitter.end();
}

/**
 * Rows as RecordRows. `parsed`, when given, is asked first for a row's value: a reader
 * that has just parsed the row (the verifier, in one pass with recheck) saves a second parse.
 */
export async function* recordRows(
  rows: AsyncIterable<Row> | Iterable<Row>,
  options: RecordReadOptions,
  parsed?: (row: Row) => JsonValue | undefined,
): AsyncGenerator<RecordRow> {
  const reading = new RecordRowReading(options);
  for await (const row of rows) yield reading.read(row, parsed?.(row));
}

/** One row at a time as a RecordRow: the Session count is the only state. */
export class RecordRowReading {
  private opens = 0;

  constructor(private readonly options: RecordReadOptions = {}) {}

  /** The row as a RecordRow; `known`, when given, is its value, already parsed. */
  read(row: Row, known?: JsonValue): RecordRow {
    const sessionIndex = Math.max(this.opens - 1, 0);
    if (row.code === "too_long") return { code: "too_long", row: row.number, sessionIndex, length: row.length, limit: row.limit };
    const read = known !== undefined ? { ok: true as const, value: known } : this.options.canonical === true ? readCanonical(row.bytes) : readPlain(row.bytes);
    if (!read.ok) return { code: "unreadable", row: row.number, sessionIndex, detail: read.detail };
    const value = read.value;
    if (!isJsonObject(value)) return { code: "not_an_object", row: row.number, sessionIndex };
    const lineType = typeof value["line_type"] === "string" ? value["line_type"] : undefined;
    if (lineType === "open") this.opens++;
    const seq = value["seq"];
    return {
      code: "object",
      row: row.number,
      sessionIndex: Math.max(this.opens - 1, 0),
      lineType,
      seq: typeof seq === "number" && Number.isSafeInteger(seq) ? seq : undefined,
      value,
    };
  }
}

type Read = { readonly ok: true; readonly value: ReturnType<typeof parseJson> } | { readonly ok: false; readonly detail: string };

function readPlain(bytes: Uint8Array): Read {
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, detail: "not JSON: stream did not contain valid UTF-8" };
  try {
    return { ok: true, value: parseJson(text) };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { ok: false, detail: `not JSON: ${error.message}` };
  }
}

function readCanonical(bytes: Uint8Array): Read {
  const read = readRow(bytes);
  return read.ok ? { ok: true, value: read.value } : { ok: false, detail: read.detail };
}
