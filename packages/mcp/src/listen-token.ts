import { randomBytes } from "node:crypto";
import { open, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { describeIoError, errnoOf } from "@aegis/format/internal";
import { PRIVATE_FILE_MODE, readInputFile, syncDirectory } from "@aegis/format/durable";
import { WrapError } from "./wrap-error.js";

/**
 * The bearer token of `aegis wrap --listen` when none is given (SPEC §17.10, design §8): kept
 * in a private file beside the record, `<audit>.listen-token`, made the first time with a
 * random token and read again on every later start, so that a client configured once stays
 * configured. Every local user can reach a loopback port; only wrap's own user can read the
 * file, so only it (and root) can call tools through the listener.
 */

/** A token file holds one token and a line end; a few KiB leaves room for nothing else (SPEC §18). */
const MAX_TOKEN_FILE_BYTES = 4096;
/** What a token may hold: visible ASCII, which any header carries unchanged. */
const TOKEN = /^[\x21-\x7e]+$/;

/** `<audit>.listen-token`: where wrap keeps the token it makes. */
export function listenTokenPath(audit: string): string {
  return `${audit}.listen-token`;
}

/**
 * The token in `path`, made (32 random bytes, base64url) when there is no file. A file that
 * is not wrap's user's own, or that group or others may read or write, is refused: a token
 * someone else has seen guards nothing.
 *
 * @throws WrapError `listen_token` when the file cannot be made or read, or is not private.
 */
export async function listenToken(path: string): Promise<string> {
  const made = await makeTokenFile(path);
  return made ?? (await readTokenFile(path));
}

/** Make the file with a new token; `undefined` when it already exists. */
async function makeTokenFile(path: string): Promise<string | undefined> {
  const token = randomBytes(32).toString("base64url");
  let handle;
  try {
    handle = await open(path, "wx", PRIVATE_FILE_MODE);
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return undefined;
    throw refused(path, `cannot make the token file: ${describeIoError(error)}`);
  }
  try {
    // The umask may have taken the owner's bits too: 0600 whatever it is.
    await handle.chmod(PRIVATE_FILE_MODE);
    await handle.writeFile(`${token}\n`);
    await handle.sync();
  } catch (error) {
    throw refused(path, `cannot write the token file: ${describeIoError(error)}`);
  } finally {
    await handle.close();
  }
  await syncDirectory(dirname(path)).catch(() => undefined);
  return token;
}

async function readTokenFile(path: string): Promise<string> {
  let bytes: Buffer;
  let info;
  try {
    info = await stat(path);
    bytes = await readInputFile(path, MAX_TOKEN_FILE_BYTES);
  } catch (error) {
    throw refused(path, `cannot read the token file: ${describeIoError(error)}`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw refused(path, `the token file belongs to uid ${info.uid}, not to this user (uid ${uid})`);
  if ((info.mode & 0o077) !== 0)
    throw refused(path, `the token file is mode ${(info.mode & 0o777).toString(8).padStart(4, "0")}: others may read or change it`);
  const token = bytes.toString("latin1").replace(/\r?\n$/, "");
  if (!TOKEN.test(token)) throw refused(path, "the token file does not hold a token: one line of visible ASCII, no spaces");
  return token;
}

/** Why the token file cannot be used: wrap does not start. */
function refused(path: string, detail: string): WrapError {
  return new WrapError({ code: "listen_token", path, detail });
}
