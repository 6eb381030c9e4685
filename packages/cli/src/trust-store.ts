import { existsSync } from "node:fs";
import {
  checkHex,
  decodeUtf8,
  describeHexFault,
  isPublicKeyFileText,
  publicKeyPathOf,
  readKeyList,
  describeIoError as ioErrorText,
} from "@aegis/format/internal";
import { readInputFile } from "@aegis/format/durable";
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
  const signing = await signingKeyIn(path, text);
  if (signing !== undefined) throw new CliError({ code: "unreadable_trust_store", path, detail: signing });
  return [...read.keys];
}

/**
 * Why the file is a signing key, not a list of public keys (SPEC §13.4), if it is: a seed
 * pins nothing, and trusting it would fail every record as signed by a key not trusted. It is
 * one when its only row is a seed whose public key is the one in the public key file beside
 * it (`signing.key` and `signing.pub`), or when it is named as `aegis keygen` names a key,
 * `*.key`, and holds only one row of 64 hex, as a key file does.
 */
async function signingKeyIn(path: string, text: string): Promise<string | undefined> {
  const rows = text.split("\n").map((r) => r.replace(/\r$/, "").trim());
  const body = rows.filter((r) => r !== "");
  const [only] = body;
  if (only === undefined || body.length !== 1 || checkHex(only, 64) !== undefined) return undefined;
  const { SigningKey } = await import("@aegis/format");
  const publicKey = SigningKey.fromSeed(Buffer.from(only, "hex")).publicKeyHex;
  const beside = publicKeyPathOf(path);
  const pub =
    beside === path
      ? undefined
      : await readInputFile(beside, 4096).then(
          (b) => b.toString("utf8"),
          () => undefined,
        );
  const listed = pub === undefined ? undefined : readKeyList(pub);
  if (listed?.ok === true && listed.keys.includes(publicKey))
    return `it is a signing key (a seed): the public key file beside it, ${beside}, holds its public key; give that as --trust-store`;
  if (path.endsWith(".key"))
    return "it looks like a signing key (one seed of 64 hex, named *.key), not a list of public keys; give its public key file (aegis keygen writes <name>.pub beside the key)";
  return undefined;
}

/** 16,000 keys and their comments (SPEC §18): far more than any deployment pins. */
const MAX_TRUST_STORE_BYTES = 1_048_576;

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
