import { constants } from "node:fs";
import { chmod, open, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { makeDirectories } from "../durable/files.js";
import { describeFileKind, kindOf, readInputFile } from "../durable/input-file.js";
import { describeIoError } from "../durable/io-text.js";
import { errnoOf } from "../durable/sync.js";
import { checkHex, describeHexFault } from "../wire/hex.js";
import { decodeUtf8, trimWhiteSpace } from "../wire/text.js";
import { KeyFileError } from "./key-file-fault.js";

/**
 * Public key files (SPEC §13.6). The reference writes a signing key as 64 lowercase hex, and
 * a public key is 64 lowercase hex too: a public key file in that form can be handed to
 * `--signing-key`, which would then sign with the public key's bytes as the secret seed, so
 * that anyone holding the public key could sign as that key. aegis writes a public key
 * file with a first row that a trust-store reader skips as a comment (so the file is a trust
 * store of one key, for aegis and for the reference alike) and that no signing-key reader
 * takes for a seed.
 */

/** The first row of every public key file aegis writes (SPEC §13.6). */
export const PUBLIC_KEY_FILE_HEADER = "# aegis ed25519 public key";

/** The text of a public key file: the header, then the key as 64 lowercase hex, each row ending in `\n`. */
function publicKeyFileText(publicKeyHex: string): string {
  return `${PUBLIC_KEY_FILE_HEADER}\n${publicKeyHex}\n`;
}

/** Whether `text` is in the form of a public key file aegis writes: its first row (less one `\r`) is the header. */
export function isPublicKeyFileText(text: string): boolean {
  const first = text.split("\n", 1)[0] ?? "";
  return (first.endsWith("\r") ? first.slice(0, -1) : first) === PUBLIC_KEY_FILE_HEADER;
}

/** A list of public keys read from text, or the first row that is not one (1-based). */
export type KeyListReading = { readonly ok: true; readonly keys: readonly string[] } | { readonly ok: false; readonly row: number; readonly detail: string };

/**
 * Public keys from the text of a trust store or a public key file (SPEC §13.4, §13.6): rows
 * split at `\n`, one trailing `\r` dropped, trimmed of White_Space (as the reference trims);
 * empty rows and rows beginning with `#` are skipped; every other row must be 64 lowercase
 * hex. A bare 64-hex file (the reference's form) is a list of one key.
 */
export function readKeyList(text: string): KeyListReading {
  const keys: string[] = [];
  const rows = text.split("\n");
  if (rows.at(-1) === "") rows.pop();
  for (const [index, row] of rows.entries()) {
    const line = trimWhiteSpace(row.endsWith("\r") ? row.slice(0, -1) : row);
    if (line === "" || line.startsWith("#")) continue;
    const fault = checkHex(line, 64);
    if (fault !== undefined) return { ok: false, row: index + 1, detail: describeHexFault(fault) };
    keys.push(line);
  }
  return { ok: true, keys };
}

/**
 * Where the public key of the signing key at `path` is kept: `signing.pub` for
 * `signing.key`, `X.pub` for any other name `X` (SPEC §13.6). `aegis keygen` writes it there, and a signing
 * key that holds the same 64 hex is refused.
 */
export function publicKeyPathOf(path: string): string {
  const name = basename(path);
  return name.endsWith(".key") && name.length > ".key".length ? join(dirname(path), `${name.slice(0, -".key".length)}.pub`) : `${path}.pub`;
}

/** A trust store's bound (SPEC §18): a public key file is read as one. */
const MAX_PUBLIC_KEY_FILE_BYTES = 1_048_576;

/**
 * The public keys the file at `path` holds, in either form; none when there is no such file
 * or it is not a list of keys. For a check that is an extra guard, never a reason to fail.
 */
export async function publicKeysIn(path: string): Promise<readonly string[]> {
  try {
    const text = decodeUtf8(await readInputFile(path, MAX_PUBLIC_KEY_FILE_BYTES));
    if (text === undefined) return [];
    const read = readKeyList(text);
    return read.ok ? read.keys : [];
  } catch {
    return [];
  }
}

/**
 * Write a public key file (SPEC §13.6): the header, then the key, mode 0644 (it is public),
 * fsynced. Refuses an existing path unless `force`.
 *
 * @throws KeyFileError `exists` when `path` exists and `force` is not set, `io` when it
 * cannot be written or is not a regular file.
 */
export async function writePublicKeyFile(path: string, publicKeyHex: string, options: { force?: boolean } = {}): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | (options.force === true ? constants.O_TRUNC : constants.O_EXCL);
  try {
    await makeDirectories(dirname(path));
    const kind = await stat(path).then(kindOf, () => undefined);
    if (kind !== undefined && kind !== "file") throw new KeyFileError({ code: "io", path, detail: `${describeFileKind(kind)}, not a key file` });
    const handle = await open(path, flags, 0o644);
    try {
      await handle.writeFile(publicKeyFileText(publicKeyHex));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(path, 0o644);
  } catch (error) {
    if (error instanceof KeyFileError) throw error;
    if (errnoOf(error) === "EEXIST") throw new KeyFileError({ code: "exists", path });
    throw new KeyFileError({ code: "io", path, detail: describeIoError(error) });
  }
}
