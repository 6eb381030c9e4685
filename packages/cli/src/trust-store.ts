import { readFile } from "node:fs/promises";
import { checkHex, decodeUtf8, describeHexFault, trimWhiteSpace, describeIoError as ioErrorText } from "@aegis/format";
import { CliError } from "./fault.js";

/**
 * A trust store: one 64-lowercase-hex public key per line; blank lines and lines that
 * start with `#` (after trimming) are skipped; anything else on a line is an error naming
 * its 1-based line number. A store with no keys is valid and pins to nothing.
 */
export async function readTrustStore(path: string): Promise<string[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
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

/** A `--key` value: the 64-hex public key, checked before anything is read. */
export function checkKeyArgument(value: string): string {
  const fault = checkHex(value, 64);
  if (fault !== undefined) throw new CliError({ code: "bad_key_argument", value, detail: describeHexFault(fault) });
  return value;
}
