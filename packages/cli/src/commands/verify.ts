import { Command, Option } from "clipanion";
import { RecordReadError, verifyRecord, type Verification, type VerifyOptions } from "@aegis/format";
import { verifyRecordFiles, type FileVerification, unmatched, describeIoError as ioErrorText } from "@aegis/format/internal";
import { openRegularFile } from "@aegis/format/durable";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { CheckpointFinding, CheckpointedVerification, GivenCheckpoint, NoteVerifier } from "@aegis/proof";
import { match } from "ts-pattern";
import type { EnvelopeDamage } from "@aegis/envelope";
import { AegisCommand, StdoutClosed } from "../command.js";
import { exitCodeOfVerdict, type ExitCode } from "../exit-code.js";
import { CliError, renderFault, type CliFault } from "../fault.js";
import { Progress } from "../progress.js";
import { checkKeyArgument, readTrustStore } from "../trust-store.js";
import { describeForeignKey, describeNotARecord, describeUnfinishedCalls, mayBeNotARecord, verifyJsonParts, verifyTextParts } from "../verify-report.js";
import { verifyJson } from "../verify-view.js";
import { checkRecordAgainst, isLoss, type EnvelopeTally } from "@aegis/envelope/internal";
import { describeTally } from "../envelope/check-record.js";
import { STDIN, rereadableRecord, streamedRecord, type RecordInput } from "../record-input.js";

export class VerifyCommand extends AegisCommand {
  static override paths = [["verify"]];

  static override usage = Command.Usage({
    description: "Check that a record file is whole, unaltered and signed, or say where the first break is",
    details: `
      Walks the record once, streaming, and prints the verdict: \`Verified\`, \`Tampered: <reason>\` or \`Indeterminate: <reason>\`, then one \`key_id\` line per signing key the file publishes, the \`coverage\` a valid signature reached, and the calls in flight when the last Session has no close.

      A Session that ended (a later Session follows it, or it closed) with calls that have an \`intent\` and no \`outcome\`, as a killed \`aegis wrap\` leaves them once it is started again on the record, is said on stderr: one line with how many and which (\`aegis show\` lists each). \`--json\` carries them as \`unfinished_calls\`. Stdout and the exit code stay as the reference's.

      Without \`--key\` or \`--trust-store\` the verdict is \`Verified (unpinned)\`: the file is internally consistent, but anyone could have signed it. With either, every Session must be signed by one of the given keys, and success reads \`Verified (pinned to <key_id>)\`. A trust store with no keys in it pins to nothing.

      With \`--checkpoint\` (repeatable; SPEC §19.4), the record is also held to checkpoints kept apart from it (\`aegis checkpoint\`): each must be signed by the key of the Session holding its last Line (a trusted one, when pinned) and state the root of the record's first Lines. A record with fewer Lines than a checkpoint covers is \`Tampered\` (\`truncated\`), as is one whose Lines do not have the stated root, and two checkpoints of one origin and size with different roots (the record forked). A checkpoint that covers every Line anchors a last Session with no close: \`Verified\`, its calls in flight still listed. One line per checkpoint says what was found. With \`--witness VKEY\` (repeatable) the witnesses' cosignatures of each checkpoint are counted too (SPEC §19.4), and \`--min-witnesses K\` requires K distinct witnesses among those given on every checkpoint: fewer is \`Indeterminate\` (\`too_few_witnesses\`, exit 3); a cosignature by a given witness that does not check refuses its checkpoint.

      With \`--envelope\`, a last line summarises what the Envelope holds for the digests the record names (\`aegis envelope verify\` lists them one by one); it changes neither the verdict nor the exit code. An Envelope that cannot be read is a check asked for that did not run: it is said on stderr (and as \`envelope.error\` in \`--json\`), the verdict is still printed, and the exit code is 2 unless the record is Tampered (1).

      Given several records, or a directory with \`--recursive\` (every \`.aarl\` file under it), verify checks them several at once, one per core, and prints each file's answer in the form above under a \`==> PATH <==\` header, in the order given (a directory's files sorted by path), then a \`summary:\` line; a file that cannot be read is answered \`Unreadable: <why>\` and the others are still checked. \`--json\` then prints one document per line (JSON Lines), each with the file's \`path\`. The exit code is the worst answer: Tampered (1), then Unreadable (2), then Indeterminate (3). Beyond one machine, the same command fans out under any batch scheduler: one file, or one directory, per task.

      Exit codes: 0 Verified, 1 Tampered or a usage error, 2 the record or trust store could not be read, 3 Indeterminate.
    `,
    examples: [
      ["Verify a record against the signer's public key", "aegis verify --key 3de537a06e04b2ffe1fb0558ea16d3c0f042ed99f7e392698aa5120f568d4e2c session.aarl"],
      ["Accept any key listed in a trust store", "aegis verify --trust-store trusted-keys.txt session.aarl"],
      ["Internal consistency only, as JSON", "aegis verify --json session.aarl"],
      ["Also check the Envelope holds every request and response", "aegis verify --key 3de537a0...4e2c --envelope session.envelope session.aarl"],
      ["Hold the record to a checkpoint kept elsewhere", "aegis verify --key 3de537a0...4e2c --checkpoint /backup/session.checkpoint session.aarl"],
      [
        "And require a witness's cosignature on it",
        "aegis verify --key 3de537a0...4e2c --checkpoint session.checkpoint --witness 'witness.example.org/w1+1a2b3c4d+BA...' --min-witnesses 1 session.aarl",
      ],
      ["Every record of a fleet, several at once, one JSON line each", "aegis verify --json --recursive --trust-store fleet-keys.txt /var/log/agents/"],
    ],
  });

  keys = Option.Array("--key", [], { description: "A trusted public key, 64 lowercase hex (repeatable)", arity: 1 });
  trustStore = Option.String("--trust-store", { description: "A file of trusted public keys, one per line" });
  envelopes = Option.Array("--envelope", [], { arity: 1, description: "Also check an Envelope store or pack holds the bytes the record names" });
  checkpoints = Option.Array("--checkpoint", [], { description: "A checkpoint the record must agree with (repeatable)", arity: 1 });
  witnesses = Option.Array("--witness", [], { description: "With --checkpoint: a witness's verifier key whose cosignatures count (repeatable)", arity: 1 });
  minWitnesses = Option.String("--min-witnesses", { description: "With --witness: how many distinct witnesses must have cosigned each checkpoint" });
  quiet = Option.Boolean("-q,--quiet", false, { description: "Print nothing on stdout: the exit code alone says it" });

  protected override get quietStdout(): boolean {
    return this.quiet;
  }

  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of text (one per line for several records)" });
  recursive = Option.Boolean("--recursive", false, { description: "Verify every .aarl file under each directory given" });
  threads = Option.String("--threads", {
    description:
      "Threads to use: for one record, those checking its signatures; for several, records verified at once. 0: everything on one thread. Default: one per core",
  });
  records = Option.Rest({ name: "PATH", required: 1 });

  /** `--envelope`: one, never "the last given wins". */
  private get envelope(): string | undefined {
    return this.envelopes[0];
  }

  protected async run(): Promise<ExitCode> {
    if (this.envelopes.length > 1) throw usage("--envelope is given once: verify checks one Envelope against the record");
    const keys = this.keys.map(checkKeyArgument);
    const pinned = keys.length > 0 || this.trustStore !== undefined;
    const stored = this.trustStore === undefined ? [] : await readTrustStore(this.trustStore);
    const trust = [...keys, ...stored];
    if (this.trustStore !== undefined && trust.length === 0) {
      // Still a pin (the reference's rule): a truncated or mis-mounted store must not read
      // as unpinned. Say so on stderr; stdout stays the reference's.
      this.fail({ code: "empty_trust_store", path: this.trustStore });
    }
    // With --envelope the record is read twice (verify, then its digests).
    const threads = this.threadCount();
    this.cosigners = await this.witnessKeys();
    const [only, ...others] = this.records;
    if (only === undefined || others.length > 0 || this.recursive) return this.verifyMany(pinned ? trust : undefined, pinned, threads);
    const checkpoints: GivenCheckpoint[] = [];
    if (this.checkpoints.length > 0) {
      const { readProofInput, statedCheckpoint } = await import("../proof-files.js");
      for (const path of this.checkpoints) {
        const bytes = await readProofInput(path, "checkpoint");
        checkpoints.push({ label: path, bytes, stated: statedCheckpoint(path, bytes) });
      }
    }
    this.given = checkpoints;
    const input = this.envelope === undefined ? await streamedRecord(only) : await rereadableRecord(only);
    try {
      return await this.verifyInput(input, pinned, trust, threads);
    } finally {
      await input.dispose();
    }
  }

  private async verifyInput(input: RecordInput, pinned: boolean, trust: readonly string[], threads: number | undefined): Promise<ExitCode> {
    const progress = new Progress(this.context.stderr, "verifying", input.size ?? 0);
    let result;
    let findings: readonly CheckpointFinding[] = [];
    try {
      const options = { ...(pinned ? { trust } : {}), ...(threads === undefined ? {} : { threads }), onProgress: (bytes: number) => progress.update(bytes) };
      const source = input.path === STDIN ? { stream: process.stdin, name: input.shown } : input.path;
      ({ verification: result, findings } = await verifyHeld(source, this.given, { ...options, ...this.cosigners }));
    } catch (error) {
      if (error instanceof RecordReadError) throw new CliError({ code: "unreadable_record", path: input.shown, detail: ioErrorText(error.cause) });
      throw error;
    } finally {
      progress.finish();
    }
    // The Envelope's summary is added to what verify says; it changes neither verdict nor exit
    // code, and neither does an Envelope that cannot be read: that is said on stderr.
    const envelope = this.envelope === undefined ? undefined : await this.checkEnvelope(this.envelope, input);
    if (this.json) {
      const doc = {
        ...verifyJson(result, pinned),
        ...(this.given.length === 0 ? {} : { checkpoints: findings }),
        ...(this.cosigners.witnesses === undefined ? {} : { witnessed: witnessed(findings, this.cosigners.minWitnesses ?? 0) }),
        ...(envelope === undefined ? {} : { envelope: envelope.ok ? { summary: envelope.tally, damage: envelope.damage } : { error: envelope.error } }),
      };
      for (const part of verifyJsonParts(doc, 2)) await this.out(`${part}`);
      await this.out("\n");
    } else {
      for (const part of verifyTextParts(result)) await this.out(part);
      if (findings.length > 0) {
        const { describeFinding } = await import("../checkpoint-finding.js");
        for (const f of findings) await this.out(`${describeFinding(f)}\n`);
      }
      if (envelope?.ok === true) await this.out(`${describeTally(envelope.tally)}\n`);
    }
    // SPEC §13.4: stdout stays the reference's; calls a killed writer left are said beside it.
    const unfinished = describeUnfinishedCalls(result.unfinished_calls);
    if (unfinished !== undefined) this.context.stderr.write(`aegis verify: ${unfinished}\n`);
    const foreign = describeForeignKey(result, this.keys, this.trustStore !== undefined);
    if (foreign !== undefined) this.context.stderr.write(`aegis verify: ${foreign}\n`);
    const stray = input.path === STDIN ? undefined : await notARecord(result, input.shown, input.path);
    if (stray !== undefined) this.context.stderr.write(`aegis verify: ${stray}\n`);
    const older = input.path === STDIN ? undefined : await versionOneRow(result, input.path);
    if (older !== undefined)
      this.context.stderr.write(
        `aegis verify: line ${older} holds schema_version 1: it looks like a version 1 record (an earlier format of the reference's), which this verifier does not read; it reads version 2 (SPEC §12)\n`,
      );
    // The Envelope asked for and not checked: an input that could not be read (2), unless the record is Tampered.
    const code = exitCodeOfVerdict(result.verdict);
    return envelope?.ok === false && code !== 1 ? 2 : code;
  }

  private given: readonly GivenCheckpoint[] = [];
  private cosigners: Witnessing = {};

  /**
   * `--witness` and `--min-witnesses` (SPEC §19.4): read only with `--checkpoint`; a K above
   * the keys given is refused before anything is read, one above the distinct keys among
   * them is checked and never met (SPEC §19.3).
   */
  private async witnessKeys(): Promise<Witnessing> {
    if (this.witnesses.length === 0) {
      if (this.minWitnesses !== undefined) throw usage("--min-witnesses is read only with --witness: the witness keys whose cosignatures count");
      return {};
    }
    if (this.checkpoints.length === 0) throw usage("--witness is read only with --checkpoint: witnesses cosign checkpoints");
    const { parseVerifierKey, SIGNATURE_TYPE, VerifierKeyError } = await import("@aegis/proof");
    const witnesses = this.witnesses.map((text) => {
      try {
        const verifier = parseVerifierKey(text);
        if (verifier.type !== SIGNATURE_TYPE.cosignatureV1)
          throw usage(`--witness ${text}: a witness key is of type 0x04 (cosignature/v1), not 0x0${verifier.type.toString(16)}`);
        return verifier;
      } catch (error) {
        if (error instanceof VerifierKeyError) throw usage(`--witness ${JSON.stringify(text)}: ${error.message}`);
        throw error;
      }
    });
    const min = this.minWitnesses ?? "0";
    if (!/^(0|[1-9][0-9]*)$/.test(min) || Number(min) > witnesses.length)
      throw usage(`--min-witnesses ${min}: a number from 0 to the ${witnesses.length} --witness keys given`);
    return { witnesses, minWitnesses: Number(min) };
  }

  private threadCount(): number | undefined {
    if (this.threads === undefined) return undefined;
    const n = Number(this.threads);
    if (!/^\d+$/.test(this.threads) || !Number.isSafeInteger(n) || n > 1024)
      throw usage(`--threads wants a whole number from 0 to 1024, got ${JSON.stringify(this.threads)}`);
    return n;
  }

  /** Several records: each answered in the single-record form, several at once, worst answer wins. */
  private async verifyMany(trust: readonly string[] | undefined, pinned: boolean, threads: number | undefined): Promise<ExitCode> {
    if (this.checkpoints.length > 0) throw usage("--checkpoint holds one record to its checkpoints: give one record, not several");
    if (this.envelope !== undefined) throw usage("--envelope checks one record's Envelope: give one record, not several");
    if (this.records.includes(STDIN)) throw usage("- (standard input) is one record: give it alone, not among several");
    const listed = await listRecords(this.records, this.recursive);
    const tally = { verified: 0, tampered: 0, indeterminate: 0, unreadable: 0 };
    let exit: ExitCode = 0;
    let first = true;
    // A file found under a directory was a regular file when listed; one swapped for a FIFO
    // since is refused, not waited on. A path given by name may be a pipe (SPEC §18).
    const found = new Set(listed.flatMap((l) => (l.code === "file" && l.found ? [l.path] : [])));
    const answers = verifyRecordFiles(
      listed.filter((l) => l.code === "file").map((l) => l.path),
      { ...(trust === undefined ? {} : { trust }), ...(threads === undefined ? {} : { threads }), regularOnly: (path) => found.has(path) },
    );
    for (const entry of listed) {
      let answer: FileVerification;
      if (entry.code === "refused") answer = { code: "unreadable", path: entry.path, detail: entry.detail };
      else {
        const next = await answers.next();
        if (next.done === true) throw new CliError({ code: "internal", detail: "a record was not answered" });
        answer = next.value;
      }
      const fileExit = match(answer)
        .with({ code: "checked" }, (a) => exitCodeOfVerdict(a.verification.verdict))
        .with({ code: "unreadable" }, () => 2 as const)
        .exhaustive(unmatched);
      if (answer.code === "checked") tally[answer.verification.verdict.status]++;
      else tally.unreadable++;
      if (SEVERITY[fileExit] > SEVERITY[exit]) exit = fileExit;
      if (this.json) {
        const doc =
          answer.code === "checked"
            ? { path: answer.path, ...verifyJson(answer.verification, pinned) }
            : { path: answer.path, schema: "aegis.verify/1", verdict: "unreadable", error: answer.detail, exit_code: 2 };
        for (const part of verifyJsonParts(doc, 0)) await this.out(part);
        await this.out("\n");
      } else {
        await this.out(`${first ? "" : "\n"}==> ${answer.path} <==\n`);
        if (answer.code === "checked") for (const part of verifyTextParts(answer.verification)) await this.out(part);
        else await this.out(`Unreadable: ${answer.detail}\n`);
      }
      const unfinished = answer.code === "checked" ? describeUnfinishedCalls(answer.verification.unfinished_calls) : undefined;
      if (unfinished !== undefined) this.context.stderr.write(`aegis verify: ${answer.path}: ${unfinished}\n`);
      const foreign = answer.code === "checked" ? describeForeignKey(answer.verification, this.keys, this.trustStore !== undefined) : undefined;
      if (foreign !== undefined) this.context.stderr.write(`aegis verify: ${answer.path}: ${foreign}\n`);
      const stray = answer.code === "checked" ? await notARecord(answer.verification, answer.path, answer.path) : undefined;
      if (stray !== undefined) this.context.stderr.write(`aegis verify: ${stray}\n`);
      first = false;
    }
    await answers.return(undefined);
    const count = tally.verified + tally.tampered + tally.indeterminate + tally.unreadable;
    // As for one record: what could not be read is also said on stderr, with what to do.
    if (tally.unreadable > 0)
      this.context.stderr.write(
        `error: ${tally.unreadable} of ${count} record${count === 1 ? "" : "s"} could not be read\nhelp: each is answered "Unreadable" with why; a directory is read with --recursive\n`,
      );
    if (!this.json)
      await this.out(
        `\nsummary: ${count} record${count === 1 ? "" : "s"}: ${tally.verified} verified, ${tally.tampered} tampered, ${tally.indeterminate} indeterminate, ${tally.unreadable} unreadable\n`,
      );
    return exit;
  }

  private async checkEnvelope(
    path: string,
    input: RecordInput,
  ): Promise<
    { readonly ok: true; readonly tally: EnvelopeTally; readonly damage: readonly EnvelopeDamage[] } | { readonly ok: false; readonly error: string }
  > {
    const { EnvelopeError, describeDamage } = await import("@aegis/envelope");
    const { openSource } = await import("../envelope/source.js");
    let source;
    try {
      source = await openSource(path);
      for (const d of source.damage) this.context.stderr.write(`${isLoss(d) ? "error" : "note"}: ${describeDamage(d)}\n`);
      const tally = await checkRecordAgainst(input.path, source);
      return { ok: true, tally, damage: source.damage };
    } catch (error) {
      if (error instanceof StdoutClosed) throw error;
      const fault: CliFault =
        error instanceof CliError
          ? error.fault
          : error instanceof EnvelopeError
            ? { code: "envelope", fault: error.fault }
            : { code: "unreadable_record", path: input.shown, detail: ioErrorText(error) };
      const { error: text, help } = renderFault(fault);
      this.context.stderr.write(`error: the Envelope was not checked: ${text}\nhelp: ${help}\n`);
      return { ok: false, error: text };
    } finally {
      await source?.close();
    }
  }
}

/**
 * The record verified, and held to `given` (SPEC §19.4). The checkpoints' code (and the
 * Envelope's, below) is loaded only when asked for: most runs of verify need neither, and
 * each is some tens of modules to load at every start (ADR 0027).
 */
async function verifyHeld(
  source: string | { readonly stream: AsyncIterable<Uint8Array>; readonly name: string },
  given: readonly GivenCheckpoint[],
  options: Pick<VerifyOptions, "trust" | "onProgress" | "threads"> & Witnessing,
): Promise<CheckpointedVerification> {
  if (given.length > 0) return (await import("@aegis/proof")).verifyWithCheckpoints(source, given, options);
  const record = typeof source === "string" ? { path: source } : { lines: source.stream, name: source.name };
  return { verification: await verifyRecord(record, options), findings: [] };
}

/**
 * How far the record is anchored by witnesses (SPEC §19.4): the largest checkpoint that
 * matches the record and is cosigned by at least `min` witnesses given (one, when none is
 * required); 0 Lines and no checkpoint when none is.
 */
function witnessed(findings: readonly CheckpointFinding[], min: number): { readonly lines: number; readonly checkpoint: string | null } {
  const enough = findings.filter((f) => f.code === "matches" && (f.cosigned?.length ?? 0) >= Math.max(min, 1));
  const best = enough.reduce<CheckpointFinding | undefined>((a, f) => (a === undefined || f.size > a.size ? f : a), undefined);
  return { lines: best?.size ?? 0, checkpoint: best?.label ?? null };
}

/** Witness keys whose cosignatures count, and how many must have cosigned each checkpoint (SPEC §19.4). */
interface Witnessing {
  readonly witnesses?: readonly NoteVerifier[];
  readonly minWitnesses?: number;
}

/** Which answer is worse, for the exit code of several records: Tampered, then Unreadable, then Indeterminate. */
const SEVERITY: Readonly<Record<ExitCode, number>> = { 0: 0, 3: 1, 2: 2, 1: 3 };

function usage(message: string): CliError {
  return new CliError({ code: "usage", message, command: "verify" });
}

/** `found`: listed by walking a directory, not named by the user. */
type Listed =
  { readonly code: "file"; readonly path: string; readonly found: boolean } | { readonly code: "refused"; readonly path: string; readonly detail: string };

/**
 * The records named: files as given, and with `recursive` every `.aarl` file under a
 * directory, sorted by path (symbolic links to directories are not followed). A path that is
 * no record is listed as refused, with the single-record refusal's words.
 */
async function listRecords(paths: readonly string[], recursive: boolean): Promise<Listed[]> {
  const out: Listed[] = [];
  for (const path of paths) {
    const info = await lstat(path).catch(() => undefined);
    if (recursive && info?.isDirectory() === true) {
      const found = (await recordsUnder(path)).sort();
      if (found.length === 0) out.push({ code: "refused", path, detail: "a directory holding no .aarl file" });
      for (const file of found) out.push({ code: "file", path: file, found: true });
      continue;
    }
    try {
      await streamedRecord(path);
      out.push({ code: "file", path, found: false });
    } catch (error) {
      if (!(error instanceof CliError) || error.fault.code !== "unreadable_record") throw error;
      out.push({ code: "refused", path, detail: error.fault.detail });
    }
  }
  return out;
}

async function recordsUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await recordsUnder(path)));
    else if (entry.isFile() && entry.name.endsWith(".aarl")) found.push(path);
  }
  return found;
}

/** What is said of a file that may not be a record at all; its first bytes are read again only then. */
/**
 * The row the walk stopped at as malformed, when it says `"schema_version": 1`: a record of the
 * reference's earlier format, which a new user may hand over (SPEC §12). Read again only then,
 * and only up to that row, each row bounded as the walk bounds it.
 */
async function versionOneRow(v: Verification, path: string): Promise<number | undefined> {
  if (v.verdict.status !== "tampered" || v.verdict.reason.code !== "malformed_line") return undefined;
  const wanted = v.verdict.reason.line;
  const { readRecord } = await import("@aegis/format/internal");
  try {
    for await (const row of readRecord(path)) {
      if (row.row < wanted) continue;
      return row.code === "object" && row.value["schema_version"] === 1 ? row.row : undefined;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

async function notARecord(v: Verification, shown: string, path: string): Promise<string | undefined> {
  return mayBeNotARecord(v) ? describeNotARecord(v, shown, await firstBytes(path)) : undefined;
}

/**
 * The first bytes of a file already verified, for what is said about it; none if it cannot be
 * read again. Only a regular file is opened again: a FIFO or a device was read once, as it
 * streamed, and opening it a second time would wait for a writer that is gone.
 */
async function firstBytes(path: string): Promise<Uint8Array> {
  try {
    const file = await openRegularFile(path);
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(256), 0, 256, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch {
    return new Uint8Array(0);
  }
}
