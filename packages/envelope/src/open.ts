import { stat } from "node:fs/promises";
import { openRegularFile } from "@aegis/format/durable";
import { join } from "node:path";
import { DirectorySource } from "./directory-source.js";
import { EnvelopeError, io } from "./errors.js";
import { DESCRIPTOR_FILE, DESCRIPTOR_MAGIC, PACK_MAGIC } from "./layout.js";
import { PackSource } from "./pack-read.js";
import type { EnvelopeSource } from "./source.js";
import { readAt } from "./window.js";

/**
 * Open an Envelope for reading by what is on disk (SPEC §14.1): a directory holding an
 * `aegis-envelope` descriptor is a store (opened read-only, without its lock), a file
 * starting with `AEGISPAK` is a pack. Anything else is refused, saying what was found.
 *
 * @throws EnvelopeError `not_an_envelope`, `unsupported_version`, `damaged_descriptor`, `io`.
 */
export async function openEnvelope(path: string): Promise<EnvelopeSource> {
  const info = await io(path, () => stat(path));
  if (info.isDirectory()) {
    const descriptor = join(path, DESCRIPTOR_FILE);
    const found = await stat(descriptor).then(
      () => true,
      () => false,
    );
    if (!found) throw new EnvelopeError({ code: "not_an_envelope", path, detail: `a directory without an ${DESCRIPTOR_FILE} descriptor` });
    return DirectorySource.open(path);
  }
  if (!info.isFile()) throw new EnvelopeError({ code: "not_an_envelope", path, detail: "neither a directory nor a regular file" });
  const magic = await io(path, async () => {
    const handle = await openRegularFile(path);
    try {
      const bytes = Buffer.alloc(8);
      const got = await readAt(handle, bytes, 0);
      return bytes.toString("latin1", 0, got);
    } finally {
      await handle.close();
    }
  });
  if (magic === PACK_MAGIC) return PackSource.open(path);
  if (magic === DESCRIPTOR_MAGIC) {
    throw new EnvelopeError({ code: "not_an_envelope", path, detail: "this is a store's descriptor: open the directory that holds it" });
  }
  throw new EnvelopeError({
    code: "not_an_envelope",
    path,
    detail: `a file that starts with neither "${PACK_MAGIC}" (a pack) nor belongs to a store directory`,
  });
}
