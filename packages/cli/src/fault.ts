import { unmatched, describeKeyFileFault, describeWriterFault, type KeyFileFault } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { FaultError, type WriterFault } from "@aegis/format";
import { describeEnvelopeFault, type EnvelopeFault } from "@aegis/envelope/internal";
import type { WrapFault } from "@aegis/mcp";
import type { ExitCode } from "./exit-code.js";
import { exitCodeOfExportFault, renderExportFault, type ExportFault } from "./export/fault.js";

/**
 * Everything a user can get wrong, or that can go wrong under them, as a value. Each is
 * printed as `error: ...` and `help: ...` on stderr, never with a stack trace, and exits
 * with its documented code.
 */
export type CliFault =
  | { readonly code: "usage"; readonly message: string; readonly command: string }
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
  /** `problems`: each problem's text (describePolicyProblem), every one of them; the rendering shows the first few. */
  | { readonly code: "policy_parse"; readonly path: string; readonly problems: readonly string[] }
  /** `option`: the option that named it, so the help speaks of the right one. */
  | { readonly code: "unreadable_policy"; readonly path: string; readonly detail: string; readonly option: "--policy" | "--policies" }
  | { readonly code: "no_policies"; readonly path: string }
  | { readonly code: "envelope"; readonly fault: EnvelopeFault }
  | { readonly code: "envelope_entry"; readonly digest: string; readonly answer: "missing" | "redacted" | "digest_mismatch"; readonly detail: string }
  /** `gate`: refused up front by --require-verified, or failed after rechecking (the default). */
  | { readonly code: "not_verified"; readonly verdict: string; readonly gate: "require_verified" | "default" }
  | { readonly code: "nothing_rechecked"; readonly path: string }
  /** `aegis envelope expire`: a record that does not verify decides no deletion (SPEC §14.12). */
  | { readonly code: "expiry_refused"; readonly path: string; readonly verdict: string }
  | { readonly code: "bindings_parse"; readonly path: string; readonly message: string }
  | { readonly code: "bad_tools_list"; readonly path: string; readonly detail: string }
  | { readonly code: "unreadable_bindings"; readonly path: string; readonly detail: string }
  /** `detail`: the relay's own words for it (describeWrapFault), said where @aegis/mcp is loaded: not every command loads it. */
  | { readonly code: "wrap"; readonly fault: WrapFault; readonly detail: string }
  | { readonly code: "control"; readonly path: string; readonly problem: "no_wrap" | "denied" | "bad_answer" | "refused"; readonly detail: string }
  /** `aegis wrap --control-group`: a group that could not be resolved (SPEC §17.5). */
  | { readonly code: "control_group"; readonly group: string; readonly detail: string }
  /** `aegis checkpoint` will not vouch for these Lines with this key. */
  | { readonly code: "checkpoint_refused"; readonly path: string; readonly detail: string; readonly help: string }
  /** `aegis prove` will not prove this Line under this checkpoint. */
  | { readonly code: "proof_refused"; readonly detail: string; readonly help: string }
  /** A checkpoint or proof file that could not be read, or is not one. */
  | { readonly code: "unreadable_input"; readonly what: "checkpoint" | "proof"; readonly path: string; readonly detail: string }
  /** `aegis report`: a record too large for a page to carry. */
  | { readonly code: "record_too_large"; readonly path: string; readonly size: number; readonly limit: number }
  /** `aegis export` exported nothing, or not everything (SPEC Appendix A.6). */
  | { readonly code: "export"; readonly fault: ExportFault }
  /**
   * `aegis witness`: its key file cannot be read or made (`key`), its state directory is
   * another witness's or cannot be read (`state`), or its address cannot be listened on
   * (`listen`). `help` says what to do.
   */
  | { readonly code: "witness"; readonly problem: "key" | "state" | "listen"; readonly detail: string; readonly help: string }
  | { readonly code: "internal"; readonly detail: string };

export class CliError extends FaultError<CliFault> {
  constructor(fault: CliFault) {
    super("CliError", fault, (f) => f.code);
  }
}

export function exitCodeOfFault(fault: CliFault): ExitCode {
  return (
    match(fault)
      .with({ code: "usage" }, { code: "bad_key_argument" }, { code: "empty_trust_store" }, () => 1 as const)
      // A trust store that is no list of keys could not be read as one (README: exit 2).
      .with({ code: "unreadable_record" }, { code: "unreadable_trust_store" }, { code: "bad_trust_store_line" }, () => 2 as const)
      .with({ code: "key_file" }, (f) => (f.fault.code === "io" || f.fault.code === "missing" ? (2 as const) : (1 as const)))
      // A last line the verifier calls Tampered is the evidence failing (as `aegis verify` exits), not an unreadable file.
      .with({ code: "writer" }, (f) => (f.fault.code === "tampered_tail" ? (1 as const) : (2 as const)))
      .with({ code: "output_dir" }, () => 2 as const)
      .with({ code: "no_such_call" }, { code: "checkpoint_refused" }, { code: "proof_refused" }, () => 1 as const)
      .with({ code: "unreadable_input" }, { code: "record_too_large" }, () => 2 as const)
      .with({ code: "export" }, (f) => exitCodeOfExportFault(f.fault))
      .with({ code: "bad_vectors" }, { code: "policy_parse" }, { code: "unreadable_policy" }, { code: "no_policies" }, () => 2 as const)
      // A file that exists, a digest that is not one: refusals. Everything else: unreadable.
      .with({ code: "envelope" }, (f) => (f.fault.code === "exists" || f.fault.code === "bad_digest" ? (1 as const) : (2 as const)))
      .with({ code: "envelope_entry" }, () => 1 as const)
      // The evidence did not hold, or showed nothing: a failure, never a pass.
      .with({ code: "not_verified" }, { code: "nothing_rechecked" }, { code: "expiry_refused" }, () => 1 as const)
      .with({ code: "bindings_parse" }, { code: "unreadable_bindings" }, { code: "bad_tools_list" }, () => 2 as const)
      // wrap could not start: nothing ran (the reference's exit code for it).
      .with({ code: "wrap" }, { code: "control_group" }, () => 1 as const)
      // A witness key or state that cannot be read is an input; an address taken is a failure to start.
      .with({ code: "witness" }, (f) => (f.problem === "listen" ? (1 as const) : (2 as const)))
      // No wrap answered (or this user may not ask it): nothing was decided. A wrap that
      // refused the answer: a failure.
      .with({ code: "control" }, (f) => (f.problem === "refused" ? (1 as const) : (2 as const)))
      // Not 1: a CI gate must not read a failure of aegis itself as "Tampered".
      .with({ code: "internal" }, () => 2 as const)
      .exhaustive(unmatched)
  );
}

/** The two lines a user sees: what went wrong, and what to do about it. */
export function renderFault(fault: CliFault): { readonly error: string; readonly help: string } {
  return match(fault)
    .with({ code: "usage" }, (f) => ({ error: f.message, help: `run \`aegis ${f.command === "" ? "" : `${f.command} `}--help\` for usage and examples` }))
    .with({ code: "bad_key_argument" }, (f) => ({
      error: `--key needs a 64-hex public key: ${f.detail}`,
      help: "pass the public key as `aegis keygen` prints it (64 lowercase hex), not the key_id fingerprint; a file of public keys goes to --trust-store",
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
        // Said only once the file is not known to hold a public key (SPEC §13.6), and even then
        // on a condition: making a public key private would not make it a secret.
        .with(
          { code: "too_permissive" },
          (k) =>
            `if it is the secret seed \`aegis keygen --out\` wrote, run \`chmod 600 ${k.path}\`, and make a new key if others may have read it; a public key cannot sign: give the signing key instead`,
        )
        .with({ code: "malformed" }, () => "a key file holds the 32-byte seed as 64 lowercase hex, as `aegis keygen` writes it")
        .with(
          { code: "public_key" },
          (k) =>
            `give the signing key file \`aegis keygen --out <PATH>\` wrote (mode 0600), not ${k.path}; the public key is for verifiers: \`aegis verify --trust-store <PATH>.pub\``,
        )
        .with({ code: "io" }, () => "check the path and its permissions")
        .exhaustive(unmatched),
    }))
    .with({ code: "writer" }, (f) => ({
      error: describeWriterFault(f.fault),
      help:
        f.fault.code === "torn_tail"
          ? `run \`aegis repair ${f.fault.path}\`: it moves the torn bytes aside, keeps every whole line, and the next Session chains to the last one`
          : f.fault.code === "tampered_tail"
            ? tamperedTailHelp(f.fault.path)
            : "check the output directory and that no other aegis process is writing there",
    }))
    .with({ code: "no_such_call" }, (f) => ({ error: `no call ${f.callId} in this record`, help: "run `aegis show <PATH>` to list the calls" }))
    .with({ code: "bad_vectors" }, (f) => ({
      error: `cannot run the vectors in ${f.path}: ${f.detail}`,
      help: "point aegis vectors at a directory holding manifest.json (the repository's vectors/), or regenerate it with npm run vectors:generate",
    }))
    .with({ code: "policy_parse" }, (f) => ({
      error: `policy parse error: ${fewProblems(f.problems)}`,
      help: `fix ${f.path}: a Policy Set is YAML with version, default and rules (see SPEC.md §15)`,
    }))
    .with({ code: "unreadable_policy", option: "--policy" }, (f) => ({
      error: `read policy ${f.path}: ${f.detail}`,
      help: "check the path; --policy takes a Policy Set YAML file",
    }))
    .with({ code: "unreadable_policy", option: "--policies" }, (f) => ({
      error: `read policies ${f.path}: ${f.detail}`,
      help: "check the path; --policies takes a directory of Policy Set files (*.yaml or *.yml)",
    }))
    .with({ code: "no_policies" }, (f) => ({
      error: `${f.path} holds no Policy Set (*.yaml or *.yml)`,
      help: "--policies takes a directory of the Policy Sets that governed the record",
    }))
    .with({ code: "envelope" }, (f) => ({
      error: describeEnvelopeFault(f.fault),
      help: match(f.fault.code)
        .with("locked", () => "wait for the writer to finish, or read the store with a command that only reads")
        .with("bad_digest", () => "a digest is 64 lowercase hex, as a record's request_digest or response_digest")
        .with("not_an_envelope", "unsupported_version", "damaged_descriptor", () => "--envelope takes an Envelope store directory or a pack file")
        .with("exists", () => "choose another --out path, or remove the existing file first")
        .with("io", "failed", "closed", "too_large", "not_bytes", () => "check the Envelope's path, its permissions and the free space")
        .exhaustive(unmatched),
    }))
    .with({ code: "envelope_entry" }, (f) => ({
      error: `${f.answer}: ${f.digest}: ${f.detail}`,
      help: match(f.answer)
        .with("missing", () => "check the digest against the record (`aegis envelope verify` lists every digest it names), or ask for the pack that holds it")
        .with("redacted", () => "the bytes were removed on purpose; the tombstone says when and why")
        .with("digest_mismatch", () => "the stored bytes were altered or damaged; they are not the bytes the record names")
        .exhaustive(unmatched),
    }))
    .with({ code: "not_verified", gate: "require_verified" }, (f) => ({
      error: `the record is not Verified (${f.verdict}), and --require-verified was given`,
      help: "run `aegis verify` on the record to see where it breaks, or drop --require-verified to recheck it anyway",
    }))
    .with({ code: "not_verified", gate: "default" }, (f) => ({
      error: `the record is not Verified (${f.verdict}), so its calls' verdicts cannot pass`,
      help: "run `aegis verify` on the record to see where it breaks; pass --unverified-ok to let the policy's answer alone decide the exit code (the reference's behaviour)",
    }))
    .with({ code: "nothing_rechecked" }, (f) => ({
      error: `nothing was rechecked: ${f.path} holds no recorded outcome`,
      help: "recheck a record that holds outcome lines; a recheck that re-evaluated nothing has shown nothing",
    }))
    .with({ code: "expiry_refused" }, (f) => ({
      error: `${f.path} is not Verified (${f.verdict}): nothing was expired`,
      help: "expiry deletes bytes by the calls a record shows, so it reads only records that verify: run `aegis verify` on it to see where it breaks",
    }))
    .with({ code: "bindings_parse" }, (f) => ({
      error: f.message,
      help: `fix ${f.path}: bindings are YAML with version: 1 and tools (see SPEC.md §17.4)`,
    }))
    .with({ code: "bad_tools_list" }, (f) => ({
      error: `cannot read the current tools from ${f.path}: ${f.detail}`,
      help: "--current-tools takes a file holding a server's tools/list answer, e.g. the result member of its response",
    }))
    .with({ code: "unreadable_bindings" }, (f) => ({
      error: `read bindings ${f.path}: ${f.detail}`,
      help: "check the path; --bindings takes a bindings YAML file",
    }))
    .with({ code: "wrap" }, (f) => ({
      error: f.detail,
      help: match(f.fault)
        .with({ code: "writer" }, (w) =>
          w.error.fault.code === "torn_tail"
            ? `run \`aegis repair ${w.error.fault.path}\` first: a crash left its last line torn`
            : w.error.fault.code === "tampered_tail"
              ? tamperedTailHelp(w.error.fault.path)
              : "check --audit: its directory must be writable, and no other aegis process may be writing the file",
        )
        .with({ code: "envelope" }, () => "check --envelope: an Envelope store directory, writable, with no other writer")
        .with({ code: "control" }, (c) =>
          c.error.code === "group"
            ? "run wrap as root or as a member of the --control-group (a user can give a file only to a group it is in), or drop --control-group"
            : "pass --control <PATH> (a short path, at most 107 bytes, where no other wrap listens)",
        )
        .with({ code: "spawn" }, () => "check the command after --: it must be a program wrap can start")
        .with({ code: "options" }, () => "give the server after -- or with --url, and a token (--listen-token-env) to listen off loopback")
        .with({ code: "listen" }, () => "check --listen HOST:PORT: an address of this machine, a port no other process listens on")
        .with(
          { code: "listen_token" },
          (t) =>
            `the file keeps the bearer token of --listen: make it this user's alone (chmod 600 ${t.path}), or delete it and wrap makes a new one; or pass --listen-token-env VAR`,
        )
        .with(
          { code: "checkpoints" },
          () => "run `aegis verify` on the --audit record: a record that does not verify is not checkpointed; start a new record, or drop --checkpoints",
        )
        .with(
          { code: "confine" },
          () =>
            "install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap); where unprivileged user namespaces are restricted (Ubuntu 24.04 and later: sysctl kernel.apparmor_restrict_unprivileged_userns) give bwrap an AppArmor profile that allows them; or pass --best-effort to run the server with what can be enforced, said on the record",
        )
        .with({ code: "otlp" }, () => "OTEL_EXPORTER_OTLP_PROTOCOL takes http/protobuf (the default) or http/json; or drop --otlp")
        .exhaustive(unmatched),
    }))
    .with({ code: "witness" }, (f) => ({ error: f.detail, help: f.help }))
    .with({ code: "control" }, (f) => ({
      error: `${f.path}: ${f.detail}`,
      help: match(f.problem)
        .with(
          "no_wrap",
          "bad_answer",
          () => "pass --control with the path aegis wrap printed on its stderr (approvals: control socket ...), while that wrap runs",
        )
        .with(
          "denied",
          () =>
            "the control socket is open to wrap's own user and, with aegis wrap --control-group, to that group's members: approve as one of them (SPEC §17.5)",
        )
        .with("refused", () => "run `aegis approve --list --control <PATH>` to see the calls parked now")
        .exhaustive(unmatched),
    }))
    .with({ code: "control_group" }, (f) => ({
      error: `--control-group ${f.group}: ${f.detail}`,
      help: "name a group in /etc/group, or give its numeric GID: its members will be able to approve parked calls (SPEC §17.5)",
    }))
    .with({ code: "output_dir" }, (f) => ({
      error: `cannot use ${f.path}: ${f.detail}`,
      help: "choose another --out, in a directory that exists and that you can write to",
    }))
    .with({ code: "checkpoint_refused" }, (f) => ({ error: `cannot checkpoint ${f.path}: ${f.detail}`, help: f.help }))
    .with({ code: "proof_refused" }, (f) => ({ error: `cannot prove: ${f.detail}`, help: f.help }))
    .with({ code: "unreadable_input" }, (f) => ({
      error: `read ${f.what} ${f.path}: ${f.detail}`,
      help: f.what === "checkpoint" ? "pass a checkpoint as aegis checkpoint printed it (a signed note)" : "pass a .tlog-proof file as aegis prove wrote it",
    }))
    .with({ code: "record_too_large" }, (f) => ({
      error: `${f.path} is ${f.size} bytes: a report page carries at most ${f.limit} bytes of record`,
      help: "verify it with `aegis verify` and read it with `aegis show`, which stream a record of any size; or report on a part cut at a Session boundary",
    }))
    .with({ code: "export" }, (f) => renderExportFault(f.fault))
    .with({ code: "internal" }, (f) => ({ error: `internal error: ${f.detail}`, help: "this is a bug in aegis; please report it with the command you ran" }))
    .exhaustive(unmatched);
}

/** What to do with a record whose last line the verifier calls Tampered: keep it, and write elsewhere. */
function tamperedTailHelp(path: string): string {
  return `keep ${path} as it is for whoever audits it (\`aegis verify ${path}\` gives the verdict), and record the next Session in a new file`;
}

/** The problems shown of a file that is not a Policy Set: a record given by mistake has one per YAML token. */
const SHOWN_PROBLEMS = 5;
const PROBLEM_CHARS = 200;

/** The first few problems, each cut short if long, then how many more there are. */
function fewProblems(problems: readonly string[]): string {
  const shown = problems.slice(0, SHOWN_PROBLEMS).map((p) => (p.length > PROBLEM_CHARS ? `${p.slice(0, PROBLEM_CHARS)}...` : p));
  const more = problems.length - shown.length;
  return more > 0 ? `${shown.join("; ")}; and ${more} more (${problems.length} problems in all)` : shown.join("; ");
}
