import { RecordRowReading, type RecordRow } from "../wire/record-reader.js";
import { MAX_ROW_BYTES, streamRowChunks } from "../wire/row-splitter.js";
import { readRowChunks } from "../wire/row-file.js";
import { poolFor, tuningOfFile } from "./check-pool.js";
import type { VerifyOptions } from "./verify-options.js";
import { RowVerifier, nextRows, progressOf } from "./row-verifier.js";
import { DEFAULT_TUNING } from "./deferred-checks.js";
import type { Verification } from "./verdict.js";

/** A record read once for two readers: the verifier, and whoever reads its rows. */
export interface VerifyingRead {
  /**
   * Every row, object or not (after a break too: a reader of what the
   * Lines say goes on where the verifier stops). Each is walked by the verifier first.
   *
   * @throws RecordReadError when the record cannot be read.
   */
  readonly rows: AsyncGenerator<RecordRow>;
  /** The verification; it settles once `rows` has been read to its end. */
  verification(): Promise<Verification>;
}

/**
 * Verify a record and read its rows in the same pass, so that it is read once: a pipe or
 * standard input works as well as a file, and the bytes verified are the bytes read. A row
 * the verifier parsed is not parsed again.
 */
export function readVerifying(
  source: string | { readonly stream: AsyncIterable<Uint8Array>; readonly name: string },
  options: VerifyOptions = {},
): VerifyingRead {
  const limit = options.maxRowBytes ?? MAX_ROW_BYTES;
  const name = typeof source === "string" ? source : source.name;
  // A read's rows at a time: one await per read, not one per row and per reader.
  const chunks = typeof source === "string" ? readRowChunks(source, limit, progressOf(options)) : streamRowChunks(source.stream, limit, progressOf(options));
  const reading = new RecordRowReading();
  let settle: (verification: Promise<Verification>) => void = () => undefined;
  const verification = new Promise<Verification>((resolve) => {
    settle = resolve;
  });
  async function* rows(): AsyncGenerator<RecordRow> {
    const verifier = new RowVerifier(options, poolFor(options), typeof source === "string" ? await tuningOfFile(source) : DEFAULT_TUNING);
    for (;;) {
      const read = await nextRows(chunks, name);
      if (read === undefined) break;
      for (const row of read) {
        const wait = verifier.step(row);
        if (wait !== undefined) await wait;
        yield reading.read(row, verifier.lastValue);
      }
    }
    settle(verifier.finish());
  }
  return { rows: rows(), verification: () => verification };
}
