import { match } from "ts-pattern";
import { unreachable } from "../unreachable.js";
import { errnoOf } from "../durable/sync.js";
import { constants } from "node:fs";
import { chmod, open, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { PRIVATE_FILE_MODE, makeDirectories } from "../durable/files.js";
import { describeFileKind, kindOf, readInputFile } from "../durable/input-file.js";
import { decodeUtf8 } from "../wire/text.js";
import { describeIoError } from "../durable/io-text.js";
import { SigningKey } from "./keys.js";
import { checkHex, fromCheckedHex } from "../wire/hex.js";

/**
 * Key files, compatible with the reference's `aegis keygen`: the 32-byte seed as 64
 * lowercase hex and a newline, mode 0600. The texts follow the reference's.
 */

/**
 * Why a key file could not be read or written (SPEC §13.6), with the file's `path`. Carried
 * by {@link KeyFileError}; {@link describeKeyFileFault} gives its text.
 */
export type KeyFileFault =
  /** Nothing at `path`: no key has been generated there. */
  | { readonly code: "missing"; readonly path: string }
  /** Writing without `force`, and `path` already exists: a key is never overwritten by accident. */
  | { readonly code: "exists"; readonly path: string }
  /** Group or others may read the file; `mode` is its permission bits. */
  | { readonly code: "too_permissive"; readonly path: string; readonly mode: number }
  /** The file is not exactly 64 lowercase hex and a line end; `detail` says what was found. */
  | { readonly code: "malformed"; readonly path: string; readonly detail: string }
  /** The file system refused, the file is over its limit (SPEC §18) or not UTF-8, or `path` is not a regular file. */
  | { readonly code: "io"; readonly path: string; readonly detail: string };

/**
 * The text of a key-file fault, in the reference's words, saying what to do where there is
 * something to do (`aegis keygen`, `chmod 600`). It is a {@link KeyFileError}'s message, and
 * what the CLI prints after `error: `.
 */
export function describeKeyFileFault(fault: KeyFileFault): string {
  return match(fault)
    .with({ code: "missing" }, (f) => `no signing key at ${f.path}; generate one with \`aegis keygen --out ${f.path}\``)
    .with({ code: "exists" }, (f) => `signing key ${f.path} already exists; refusing to overwrite it without --force`)
    .with({ code: "too_permissive" }, (f) => `signing key ${f.path} is readable beyond its owner (mode ${f.mode.toString(8).padStart(4, "0")}); chmod 600 it`)
    .with({ code: "malformed" }, (f) => `signing key ${f.path} is not a 64-character lowercase hex seed: ${f.detail}`)
    .with({ code: "io" }, (f) => `signing key ${f.path}: ${f.detail}`)
    .exhaustive(unreachable);
}

/**
 * Thrown by {@link readKeyFile} and {@link writeKeyFile} for a key file that a user can put
 * right; `fault.code` says what is wrong, so a caller can match it without reading the text.
 */
export class KeyFileError extends Error {
  /** `"KeyFileError"`, the name a stack trace and `String(error)` show. */
  override readonly name = "KeyFileError";
  constructor(
    /** What is wrong with the key file, with a stable `code`. */
    readonly fault: KeyFileFault,
  ) {
    super(describeKeyFileFault(fault));
  }
}

const ioDetail = describeIoError;

/** A key file holds 64 hex digits and a line end; a few KiB leaves room for nothing else (SPEC §18). */
const MAX_KEY_FILE_BYTES = 4096;

/**
 * Read a key file. Refuses a file group or others can read (mode & 0o077).
 *
 * @throws KeyFileError `missing` when there is no file, `too_permissive`, `malformed`
 * when it is not 64 lowercase hex, `io` when it cannot be read.
 */
export async function readKeyFile(path: string): Promise<SigningKey> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if (isCode(error, "ENOENT")) throw new KeyFileError({ code: "missing", path });
    throw new KeyFileError({ code: "io", path, detail: ioDetail(error) });
  }
  if ((mode & 0o077) !== 0) {
    throw new KeyFileError({ code: "too_permissive", path, mode: mode & 0o7777 });
  }
  let bytes: Buffer;
  try {
    bytes = await readInputFile(path, MAX_KEY_FILE_BYTES);
  } catch (error) {
    throw new KeyFileError({ code: "io", path, detail: ioDetail(error) });
  }
  let text = decodeUtf8(bytes);
  if (text === undefined) throw new KeyFileError({ code: "io", path, detail: "stream did not contain valid UTF-8" });
  if (text.endsWith("\n")) text = text.slice(0, -1);
  if (text.endsWith("\r")) text = text.slice(0, -1);
  return SigningKey.fromSeed(parseSeedHex(path, text));
}

function parseSeedHex(path: string, text: string): Uint8Array {
  const fault = checkHex(text, 64);
  if (fault === undefined) return fromCheckedHex(text);
  if (fault.code === "wrong_length") {
    throw new KeyFileError({ code: "malformed", path, detail: `expected 64 characters, found ${fault.found}` });
  }
  const bad = Buffer.from(text, "utf8").subarray(fault.position).toString("utf8").charAt(0);
  throw new KeyFileError({ code: "malformed", path, detail: `expected lowercase hex, found '${bad}'` });
}

/**
 * Write `key` to `path` (mode 0600, fsynced). Refuses an existing path unless `force`;
 * with `force`, an existing file's mode is tightened to 0600.
 *
 * @throws KeyFileError `exists` when `path` exists and `force` is not set, `io` when
 * it cannot be written or is not a regular file.
 */
export async function writeKeyFile(path: string, key: SigningKey, options: { force?: boolean } = {}): Promise<void> {
  // O_NONBLOCK: a FIFO swapped in after the check below neither blocks the open nor, by the
  // check after it, is handed the seed (SPEC §18).
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | (options.force === true ? constants.O_TRUNC : constants.O_EXCL);
  try {
    await makeDirectories(dirname(path));
    const kind = await stat(path).then(kindOf, () => undefined);
    if (kind !== undefined && kind !== "file") {
      // --force replaces a key file; it must not be read as leave to replace anything else.
      throw new KeyFileError({ code: "io", path, detail: `${describeFileKind(kind)}, not a key file: give --out a file path` });
    }
    const handle = await open(path, flags, PRIVATE_FILE_MODE);
    try {
      const opened = kindOf(await handle.stat());
      if (opened !== "file") throw new KeyFileError({ code: "io", path, detail: `${describeFileKind(opened)}, not a key file: give --out a file path` });
      // With --force the file may exist with a looser mode: tighten it before the seed lands.
      await handle.chmod(PRIVATE_FILE_MODE);
      await handle.writeFile(`${key.exportSeedHex()}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(path, PRIVATE_FILE_MODE);
  } catch (error) {
    if (error instanceof KeyFileError) throw error;
    if (isCode(error, "EEXIST")) throw new KeyFileError({ code: "exists", path });
    throw new KeyFileError({ code: "io", path, detail: ioDetail(error) });
  }
}

function isCode(error: unknown, code: string): boolean {
  return errnoOf(error) === code;
}
