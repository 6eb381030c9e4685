import { match } from "ts-pattern";
import { unmatched } from "../unreachable.js";
import { FaultError } from "../fault-error.js";

/**
 * How a file handed over as a signing key was found to hold a public key (SPEC §13.6):
 * whoever could read it could then sign as that key.
 */
export type PublicKeyFound =
  /** Its first row is the header of a public key file aegis writes. */
  | { readonly code: "public_key_file" }
  /** It holds a `public_key <hex>` row, as `aegis keygen` prints the public key. */
  | { readonly code: "keygen_output" }
  /** Its name ends in `.pub`, the name of a public key file. */
  | { readonly code: "pub_name" }
  /** Its 64 hex are the public key that the public key file beside it holds. */
  | { readonly code: "equals_public_key_file"; readonly public_key_file: string }
  /** Its 64 hex are one of the public keys given to the same command. */
  | { readonly code: "equals_given_key" };

/**
 * Why a key file could not be read or written (SPEC §13.6), with the file's `path`. Carried
 * by `KeyFileError`; `describeKeyFileFault` gives its text.
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
  /** Given as a signing key, the file holds a public key; `found` says how that was seen. */
  | { readonly code: "public_key"; readonly path: string; readonly found: PublicKeyFound }
  /** The file system refused, the file is over its limit (SPEC §18) or not UTF-8, or `path` is not a regular file. */
  | { readonly code: "io"; readonly path: string; readonly detail: string };

/**
 * The text of a key-file fault, saying what to do where there is something to do
 * (`aegis keygen`). It never tells anyone to make a file private that may be a public key:
 * the mode of a public key is no fault of it. It is a `KeyFileError`'s message, and
 * what the CLI prints after `error: `.
 */
export function describeKeyFileFault(fault: KeyFileFault): string {
  return match(fault)
    .with({ code: "missing" }, (f) => `no signing key at ${f.path}; generate one with \`aegis keygen --out ${f.path}\``)
    .with({ code: "exists" }, (f) => `key file ${f.path} already exists; refusing to overwrite it without --force`)
    .with(
      { code: "too_permissive" },
      (f) => `signing key ${f.path} is readable beyond its owner (mode ${f.mode.toString(8).padStart(4, "0")}): a signing key must be private`,
    )
    .with({ code: "malformed" }, (f) => `signing key ${f.path} is not a 64-character lowercase hex seed: ${f.detail}`)
    .with({ code: "public_key" }, (f) => `${f.path} ${describePublicKeyFound(f.found)}, not a signing key: a public key cannot sign`)
    .with({ code: "io" }, (f) => `signing key ${f.path}: ${f.detail}`)
    .exhaustive(unmatched);
}

function describePublicKeyFound(found: PublicKeyFound): string {
  return match(found)
    .with({ code: "public_key_file" }, () => "is a public key file (its first line is `# aegis ed25519 public key`)")
    .with({ code: "keygen_output" }, () => "holds a public key as `aegis keygen` prints it (`public_key <hex>`)")
    .with({ code: "pub_name" }, () => "is named as a public key file (.pub)")
    .with({ code: "equals_public_key_file" }, (f) => `holds the public key that ${f.public_key_file} holds`)
    .with({ code: "equals_given_key" }, () => "holds one of the public keys given to this command")
    .exhaustive(unmatched);
}

/**
 * Thrown by `readKeyFile`, `writeKeyFile` and `writePublicKeyFile` for a key file that a user
 * can put right; `fault.code` says what is wrong, so a caller can match it without reading the text.
 */
export class KeyFileError extends FaultError<KeyFileFault> {
  constructor(fault: KeyFileFault) {
    super("KeyFileError", fault, describeKeyFileFault);
  }
}
