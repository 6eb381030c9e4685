import { existsSync } from "node:fs";
import {
  checkHex,
  decodeUtf8,
  describeHexFault,
  isPublicKeyFileText,
  readInputFile,
  readKeyList,
  describeIoError as ioErrorText,
} from "@aegis/format/internal";
import { CliError } from "./fault.js";

/**
 * A trust store: one 64-lowercase-hex public key per line; blank lines and lines that
 * start with `#` (after trimming) are skipped; anything else on a line is an error naming
 * its 1-based line number. A store with no keys is valid and pins to nothing. A public key
 * file (`aegis keygen`'s `<name>.pub`) is a store of one key.
 */
export async function readTrustStore(path: string): Promise<string[]> {
  let bytes: Buffer;
  try {
    bytes = await readInputFile(path, MAX_TRUST_STORE_BYTES);
  } catch (error) {
    throw new CliError({ code: "unreadable_trust_store", path, detail: ioErrorText(error) });
  }
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new CliError({ code: "unreadable_trust_store", path, detail: "stream did not contain valid UTF-8" });
  // The grammar of SPEC §13.4, which a public key file aegis writes also follows (§13.6).
  const read = readKeyList(text);
  if (!read.ok) throw new CliError({ code: "bad_trust_store_line", path, line: read.row, detail: read.detail });
  return [...read.keys];
}

/** 16,000 keys and their comments (SPEC §18): far more than any deployment pins. */
export const MAX_TRUST_STORE_BYTES = 1_048_576;

/**
 * A `--key` value: the 64-hex public key, checked before anything is read; or the text of a
 * public key file (`--key "$(cat signing.pub)"`, SPEC §13.6), which holds one.
 */
export function checkKeyArgument(value: string): string {
  const fault = checkHex(value, 64);
  if (fault === undefined) return value;
  if (isPublicKeyFileText(value)) {
    const read = readKeyList(value);
    const [only, ...more] = read.ok ? read.keys : [];
    if (only !== undefined && more.length === 0) return only;
    throw new CliError({ code: "bad_key_argument", value, detail: "a public key file's text that does not hold exactly one key" });
  }
  // The cosign habit, `--key signing.pub`: say which option reads a file.
  const detail = existsSync(value)
    ? `${value} is a file; --key takes the key itself, and --trust-store <PATH> reads keys from a file`
    : describeHexFault(fault);
  throw new CliError({ code: "bad_key_argument", value, detail });
}
