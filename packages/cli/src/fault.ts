import { match } from "ts-pattern";
import { describeKeyFileFault, describeWriterFault, type KeyFileFault, type WriterFault } from "@aegis/format";
import type { ExitCode } from "./exit-code.js";

/**
 * Everything a user can get wrong, or that can go wrong under them, as a value. Each is
 * printed as `error: ...` and `help: ...` on stderr, never with a stack trace, and exits
 * with its documented code.
 */
export type CliFault =
  | { readonly code: "usage"; readonly message: string; readonly command: "verify" | "keygen" | "show" | "demo" | "vectors" | "" }
  | { readonly code: "bad_key_argument"; readonly value: string; readonly detail: string }
  | { readonly code: "unreadable_record"; readonly path: string; readonly detail: string }
  | { readonly code: "unreadable_trust_store"; readonly path: string; readonly detail: string }
  | { readonly code: "bad_trust_store_line"; readonly path: string; readonly line: number; readonly detail: string }
  | { readonly code: "empty_trust_store"; readonly path: string }
  | { readonly code: "key_file"; readonly fault: KeyFileFault }
  | { readonly code: "writer"; readonly fault: WriterFault }
  | { readonly code: "no_such_call"; readonly callId: string }
  | { readonly code: "output_dir"; readonly path: string; readonly detail: string }
  | { readonly code: "bad_vectors"; readonly path: string; readonly detail: string }
  | { readonly code: "internal"; readonly detail: string };

export class CliError extends Error {
  override readonly name = "CliError";
  constructor(readonly fault: CliFault) {
    super(fault.code);
  }
}

export function exitCodeOfFault(fault: CliFault): ExitCode {
  return match(fault)
    .with({ code: "usage" }, { code: "bad_key_argument" }, { code: "bad_trust_store_line" }, { code: "empty_trust_store" }, () => 1 as const)
    .with({ code: "unreadable_record" }, { code: "unreadable_trust_store" }, () => 2 as const)
    .with({ code: "key_file" }, (f) => (f.fault.code === "io" || f.fault.code === "missing" ? (2 as const) : (1 as const)))
    .with({ code: "writer" }, { code: "output_dir" }, () => 2 as const)
    .with({ code: "no_such_call" }, () => 1 as const)
    .with({ code: "bad_vectors" }, () => 2 as const)
    // Not 1: a CI gate must not read a failure of aegis itself as "Tampered".
    .with({ code: "internal" }, () => 2 as const)
    .exhaustive();
}

/** The two lines a user sees: what went wrong, and what to do about it. */
export function renderFault(fault: CliFault): { readonly error: string; readonly help: string } {
  return match(fault)
    .with({ code: "usage" }, (f) => ({ error: f.message, help: `run \`aegis ${f.command === "" ? "" : `${f.command} `}--help\` for usage and examples` }))
    .with({ code: "bad_key_argument" }, (f) => ({
      error: `--key needs a 64-hex public key: ${f.detail}`,
      help: "pass the public key as `aegis keygen` prints it (64 lowercase hex), not the key_id fingerprint",
    }))
    .with({ code: "unreadable_record" }, (f) => ({ error: `read ${f.path}: ${f.detail}`, help: "check the path; the record file must be a readable file" }))
    .with({ code: "unreadable_trust_store" }, (f) => ({
      error: `read trust store ${f.path}: ${f.detail}`,
      help: "check the path; a trust store is a text file of public keys, one per line",
    }))
    .with({ code: "bad_trust_store_line" }, (f) => ({
      error: `trust store ${f.path} line ${f.line} is not a public key: ${f.detail}`,
      help: "each line holds one 64-lowercase-hex public key; blank lines and lines starting with # are skipped",
    }))
    .with({ code: "empty_trust_store" }, (f) => ({
      error: `trust store ${f.path} holds no public keys, so no Session's key is trusted`,
      help: "add the signer's public key (64 lowercase hex) to the store, or pass it with --key",
    }))
    .with({ code: "key_file" }, (f) => ({
      error: describeKeyFileFault(f.fault),
      help: match(f.fault)
        .with({ code: "exists" }, () => "pass --force to replace it (the old key is then lost), or choose another --out")
        .with({ code: "missing" }, () => "generate a key with `aegis keygen --out <PATH>`")
        .with({ code: "too_permissive" }, (k) => `run \`chmod 600 ${k.path}\``)
        .with({ code: "malformed" }, () => "a key file holds the 32-byte seed as 64 lowercase hex, as `aegis keygen` writes it")
        .with({ code: "io" }, () => "check the path and its permissions")
        .exhaustive(),
    }))
    .with({ code: "writer" }, (f) => ({ error: describeWriterFault(f.fault), help: "check the output directory and that no other aegis process is writing there" }))
    .with({ code: "no_such_call" }, (f) => ({ error: `no call ${f.callId} in this record`, help: "run `aegis show <PATH>` to list the calls" }))
    .with({ code: "bad_vectors" }, (f) => ({
      error: `cannot run the vectors in ${f.path}: ${f.detail}`,
      help: "point aegis vectors at a directory holding manifest.json (the repository's vectors/), or regenerate it with npm run vectors:generate",
    }))
    .with({ code: "output_dir" }, (f) => ({ error: `cannot use ${f.path}: ${f.detail}`, help: "choose another --out directory" }))
    .with({ code: "internal" }, (f) => ({ error: `internal error: ${f.detail}`, help: "this is a bug in aegis; please report it with the command you ran" }))
    .exhaustive();
}
