import { open as openFile } from "node:fs/promises";
import { dirname } from "node:path";
import { acquireLock } from "../durable/lock.js";
import { PRIVATE_FILE_MODE, readFully } from "../durable/files.js";
import { syncDirectory } from "../durable/sync.js";
import { lineAt, readFileTail } from "./tail.js";
import { describeIoError } from "../durable/io-text.js";
import { RecordWriterError, lockedFault } from "./writer-error.js";

/** What {@link repairTornTail} did to the file. */
export type RepairResult =
  /** The torn row, `bytes` long from byte `offset` (where the file now ends), was moved to `sidePath`. */
  | { readonly repaired: true; readonly offset: number; readonly bytes: number; readonly sidePath: string }
  /**
   * Nothing was changed: the file holds no non-blank row (`empty`), its last row is whole
   * (`line`), or its last row is longer than a writer reads (`too_long`), which is left as is.
   */
  | { readonly repaired: false; readonly tail: "empty" | "line" | "too_long" };

/**
 * Move a torn final line out of a record file so a new Session can start (SPEC §13.2).
 * The torn bytes are copied to `<file>.torn-<offset>` and synced before the file is
 * truncated, so nothing is lost. A file whose last line is whole is left untouched. Torn
 * means what the verifier calls torn: a last line that does not parse. One that parses but
 * has no canonical form is Tampered to the verifier, and is refused, never cut.
 *
 * A verifier run on the repaired file reports the Session that was cut short as an
 * unanchored tail until a new Session is appended, which is the honest answer.
 *
 * @throws RecordWriterError `tampered_tail` when the last line is one the verifier calls
 * Tampered (the file is left untouched), `locked` while a writer holds the file, `io` on failure.
 */
export async function repairTornTail(path: string): Promise<RepairResult> {
  let release: (() => Promise<void>) | undefined;
  try {
    const lock = await acquireLock(path);
    if (!lock.ok) throw new RecordWriterError(lockedFault(path, lock));
    release = lock.release;
    const handle = await openFile(path, "r+");
    try {
      const size = (await handle.stat()).size;
      const tail = await readFileTail(handle, size);
      // Only what the verifier itself would call a torn write is cut (SPEC §13.2): a last line
      // it calls Tampered is the evidence, and cutting it would make the file look merely crashed.
      if (tail.code === "tampered") {
        throw new RecordWriterError({ code: "tampered_tail", path, offset: tail.offset, line: await lineAt(path, tail.offset), detail: tail.detail });
      }
      if (tail.code !== "torn") return { repaired: false, tail: tail.code };
      const torn = Buffer.alloc(size - tail.offset);
      await readFully(handle, torn, tail.offset);
      const sidePath = `${path}.torn-${tail.offset}`;
      // The torn bytes are the record's: as private as a new record (SPEC §13.2).
      const side = await openFile(sidePath, "wx", PRIVATE_FILE_MODE);
      try {
        await side.writeFile(torn);
        await side.sync();
      } finally {
        await side.close();
      }
      // The copy must survive a crash before the original bytes are cut off.
      await syncDirectory(dirname(sidePath));
      await handle.truncate(tail.offset);
      await handle.sync();
      return { repaired: true, offset: tail.offset, bytes: torn.length, sidePath };
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof RecordWriterError) throw error;
    throw new RecordWriterError({ code: "io", path, detail: describeIoError(error) }, { cause: error });
  } finally {
    await release?.();
  }
}
