import { existsSync } from "node:fs";
import { checkHex, decodeUtf8, describeHexFault, readInputFile, trimWhiteSpace, describeIoError as ioErrorText } from "@aegis/format/internal";
import { CliError } from "./fault.js";

/**
 * A trust store: one 64-lowercase-hex public key per line; blank lines and lines that
 * start with `#` (after trimming) are skipped; anything else on a line is an error naming
 * its 1-based line number. A store with no keys is valid and pins to nothing.
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
  const keys: string[] = [];
  const rows = text.split("\n");
  if (rows.at(-1) === "") rows.pop();
  rows.forEach((row, index) => {
    // The reference trims Unicode White_Space (so a BOM, which is not, makes a bad line).
    const line = trimWhiteSpace(row.endsWith("\r") ? row.slice(0, -1) : row);
    if (line === "" || line.startsWith("#")) return;
    const fault = checkHex(line, 64);
    if (fault !== undefined) throw new CliError({ code: "bad_trust_store_line", path, line: index + 1, detail: describeHexFault(fault) });
    keys.push(line);
  });
  return keys;
}

/** 16,000 keys and their comments (SPEC §18): far more than any deployment pins. */
export const MAX_TRUST_STORE_BYTES = 1_048_576;

/** A `--key` value: the 64-hex public key, checked before anything is read. */
export function checkKeyArgument(value: string): string {
  const fault = checkHex(value, 64);
  if (fault === undefined) return value;
  // The cosign habit, `--key signing.pub`: say which option reads a file.
  const detail = existsSync(value)
    ? `${value} is a file; --key takes the key itself, and --trust-store <PATH> reads keys from a file`
    : describeHexFault(fault);
  throw new CliError({ code: "bad_key_argument", value, detail });
}
