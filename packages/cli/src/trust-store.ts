import { readFile } from "node:fs/promises";
import { checkHex, describeHexFault } from "@aegis/format";
import { CliError } from "./fault.js";
import { ioErrorText } from "./io-text.js";

/** Unicode White_Space, which is what the reference's `str::trim` removes. */
const EDGE_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

/**
 * A trust store: one 64-lowercase-hex public key per line; blank lines and lines that
 * start with `#` (after trimming) are skipped; anything else on a line is an error naming
 * its 1-based line number. A store with no keys is valid and pins to nothing.
 */
export async function readTrustStore(path: string): Promise<string[]> {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(await readFile(path));
  } catch (error) {
    const detail = error instanceof TypeError ? "stream did not contain valid UTF-8" : ioErrorText(error);
    throw new CliError({ code: "unreadable_trust_store", path, detail });
  }
  const keys: string[] = [];
  const rows = text.split("\n");
  if (rows.at(-1) === "") rows.pop();
  rows.forEach((row, index) => {
    const line = (row.endsWith("\r") ? row.slice(0, -1) : row).replace(EDGE_SPACE, "");
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
