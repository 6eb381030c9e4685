import { errnoOf } from "../durable/sync.js";
import { constants } from "node:fs";
import { chmod, open, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { PRIVATE_FILE_MODE, makeDirectories } from "../durable/files.js";
import { describeFileKind, kindOf, readInputFile } from "../durable/input-file.js";
import { decodeUtf8 } from "../wire/text.js";
import { describeIoError } from "../durable/io-text.js";
import { SigningKey } from "./keys.js";
import { checkHex, fromCheckedHex } from "../wire/hex.js";
import { KeyFileError, type PublicKeyFound } from "./key-file-fault.js";
import { isPublicKeyFileText, publicKeyPathOf, publicKeysIn } from "./public-key-file.js";

export { KeyFileError, describeKeyFileFault, type KeyFileFault } from "./key-file-fault.js";

/**
 * Signing key files, compatible with the reference's `aegis keygen`: the 32-byte seed as 64
 * lowercase hex and a newline, mode 0600 (SPEC §13.6).
 */

const ioDetail = describeIoError;

/** A key file holds 64 hex digits and a line end; a few KiB leaves room for nothing else (SPEC §18). */
const MAX_KEY_FILE_BYTES = 4096;

/** What else a signing key is checked against: public keys it must not be. */
export interface ReadKeyFileOptions {
  /**
   * Public keys (64 lowercase hex) given to the same command, as trusted keys or pins: a
   * signing key file holding one of them is a public key, and is refused (SPEC §13.6).
   */
  readonly publicKeys?: Iterable<string>;
}

/**
 * Read a signing key file (SPEC §13.6). A file that holds a public key is refused, whatever
 * its mode: one in the form aegis writes public keys in, a `public_key <hex>` row as
 * `aegis keygen` prints it, a file named `*.pub`, and bare 64 hex equal to the key in the
 * public key file beside it (`signing.pub` for `signing.key`, `X.pub` for `X`) or to one of
 * `options.publicKeys`. Then a file group or others can read (mode & 0o077) is refused.
 *
 * @throws KeyFileError `missing` when there is no file, `public_key`, `too_permissive`,
 * `malformed` when it is not 64 lowercase hex, `io` when it cannot be read.
 */
export async function readKeyFile(path: string, options: ReadKeyFileOptions = {}): Promise<SigningKey> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if (isCode(error, "ENOENT")) throw new KeyFileError({ code: "missing", path });
    throw new KeyFileError({ code: "io", path, detail: ioDetail(error) });
  }
  // The content first: a public key handed over as a signing key is refused before its mode
  // is looked at, so that no one is told to make a public key private and sign with it.
  let bytes: Buffer;
  try {
    bytes = await readInputFile(path, MAX_KEY_FILE_BYTES);
  } catch (error) {
    throw new KeyFileError({ code: "io", path, detail: ioDetail(error) });
  }
  let text = decodeUtf8(bytes);
  if (text === undefined) throw new KeyFileError({ code: "io", path, detail: "stream did not contain valid UTF-8" });
  const publicForm = publicFormOf(path, text);
  if (publicForm !== undefined) throw new KeyFileError({ code: "public_key", path, found: publicForm });
  if (text.endsWith("\n")) text = text.slice(0, -1);
  if (text.endsWith("\r")) text = text.slice(0, -1);
  const hexFault = checkHex(text, 64);
  if (hexFault === undefined) {
    const same = await samePublicKey(path, text, options.publicKeys);
    if (same !== undefined) throw new KeyFileError({ code: "public_key", path, found: same });
  }
  if ((mode & 0o077) !== 0) {
    throw new KeyFileError({ code: "too_permissive", path, mode: mode & 0o7777 });
  }
  if (hexFault === undefined) return SigningKey.fromSeed(fromCheckedHex(text));
  if (hexFault.code === "wrong_length") {
    throw new KeyFileError({ code: "malformed", path, detail: `expected 64 characters, found ${hexFault.found}` });
  }
  const bad = Buffer.from(text, "utf8").subarray(hexFault.position).toString("utf8").charAt(0);
  throw new KeyFileError({ code: "malformed", path, detail: `expected lowercase hex, found '${bad}'` });
}

/** SPEC §13.6: what marks a file as a public key whatever its bytes encode. */
function publicFormOf(path: string, text: string): PublicKeyFound | undefined {
  if (isPublicKeyFileText(text)) return { code: "public_key_file" };
  if (/(^|\n)public_key [0-9a-f]{64}\r?(\n|$)/.test(text)) return { code: "keygen_output" };
  if (basename(path).endsWith(".pub")) return { code: "pub_name" };
  return undefined;
}

/** SPEC §13.6: bare 64 hex that are a public key known to be one. */
async function samePublicKey(path: string, hex: string, given: Iterable<string> | undefined): Promise<PublicKeyFound | undefined> {
  for (const key of given ?? []) if (key === hex) return { code: "equals_given_key" };
  const beside = publicKeyPathOf(path);
  if ((await publicKeysIn(beside)).includes(hex)) return { code: "equals_public_key_file", public_key_file: beside };
  return undefined;
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
