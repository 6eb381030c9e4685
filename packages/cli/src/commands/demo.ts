import { existsSync } from "node:fs";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Command, Option } from "clipanion";
import { RecordWriter, RecordWriterError, SigningKey, verifyRecord } from "@aegis/format";
import { writePublicKeyFile, describeIoError, KeyFileError, writeKeyFile } from "@aegis/format/internal";
import { PRIVATE_FILE_MODE, makeDirectories } from "@aegis/format/durable";
import { callLines, checkProof, defaultOrigin, proveLines, recordTree, signCheckpoint } from "@aegis/proof";
import { AegisCommand } from "../command.js";
import { checked, checkedText } from "./proof-verify.js";
import { writeProofs } from "./prove.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { verifyText } from "../verify-report.js";
import { runScript } from "../demo/agent.js";
import { DEMO_POLICY_YAML, STRICTER_POLICY_YAML } from "../demo/policy.js";
import { createStore } from "../envelope/source.js";
import { displayPath, invocation, shellWord } from "../invocation.js";

const MARKER = ".aegis-demo";
/** The call the demo proves on its own: the parked one, whose approval's decision is one of its Lines. */
const PROVED_CALL = "call-4";
const FILES = [
  "session.aarl",
  "session-tampered.aarl",
  "signing.key",
  "signing.pub",
  "session.aarl.lock",
  "policy.yaml",
  "policy-stricter.yaml",
  "session.envelope",
  "session.checkpoint",
  "proofs",
  MARKER,
];

export class DemoCommand extends AegisCommand {
  static override paths = [["demo"]];

  static override usage = Command.Usage({
    description: "Record a scripted agent's tool calls, verify the record, then show that one changed byte is found",
    details: `
      Needs no network and no model. A scripted agent makes six tool calls, each decided by a small Policy Set (\`policy.yaml\`) that allows some, denies some and parks one for approval; a human decision approves the park and the call resumes. Every call is recorded in a signed \`session.aarl\` with a freshly generated key (\`signing.key\`, mode 0600, and \`signing.pub\` beside it); the verbatim request and response bytes go to an Envelope, \`session.envelope/\`.

      The demo then verifies the record pinned to that key, changes one byte in a copy, and verifies the copy. It signs a checkpoint of the record (\`session.checkpoint\`) and proves the parked call's Lines on their own (\`proofs/\`), checking each proof with the public key alone. It ends with the exact \`aegis verify\` and \`aegis proof verify\` commands a stranger holding only the public key would run, and the \`aegis recheck\` and \`aegis envelope verify\` commands an operator would.

      The output directory must be new or empty. One an earlier demo made is replaced, its signing key included, only with \`--force\`, as \`aegis keygen\` replaces a key.
    `,
    examples: [
      ["Run the demo into ./aegis-demo", "aegis demo"],
      ["Choose the directory", "aegis demo --out /tmp/aegis-demo"],
      ["Run it again over an earlier demo's directory", "aegis demo --force"],
    ],
  });

  dir = Option.String("--out", "aegis-demo", { description: "Directory for the record and keys (default: ./aegis-demo)" });
  force = Option.Boolean("--force", false, { description: "Replace an earlier demo's directory, its signing key included" });

  protected async run(): Promise<ExitCode> {
    const dir = resolve(this.dir);
    await this.prepare(dir);
    const record = join(dir, "session.aarl");
    const tampered = join(dir, "session-tampered.aarl");
    const key = SigningKey.generate();
    try {
      await writeKeyFile(join(dir, "signing.key"), key);
      // SPEC §13.6: in the form no signing-key reader takes.
      await writePublicKeyFile(join(dir, "signing.pub"), key.publicKeyHex);
    } catch (error) {
      if (error instanceof KeyFileError) throw new CliError({ code: "key_file", fault: error.fault });
      throw error;
    }

    await writeFile(join(dir, "policy.yaml"), DEMO_POLICY_YAML);
    await writeFile(join(dir, "policy-stricter.yaml"), STRICTER_POLICY_YAML);

    let report;
    const envelope = await createStore(join(dir, "session.envelope"));
    try {
      const writer = await RecordWriter.open(record, { key, envelope });
      try {
        report = await runScript(writer);
      } finally {
        await writer.close();
      }
    } catch (error) {
      if (error instanceof RecordWriterError) throw new CliError({ code: "writer", fault: error.fault });
      throw error;
    } finally {
      await envelope.close();
    }

    // The commands below as the user can type them here: `aegis` only where that is this aegis.
    const aegis = invocation();
    const shown = shellWord(displayPath(record));
    const shownTampered = shellWord(displayPath(tampered));
    const verified = await verifyRecord({ path: record }, { trust: [key.publicKeyHex] });
    const change = await alterOneByte(record, tampered);
    const caught = await verifyRecord({ path: tampered }, { trust: [key.publicKeyHex] });
    const proved = await this.checkpointAndProve(dir, record, key, PROVED_CALL);

    const lines: string[] = [];
    lines.push("aegis demo: a scripted agent makes six tool calls under a policy that allows, denies and parks.", "");
    for (const call of report) lines.push(call.id === "" ? `            ${call.verdict}` : `  ${call.id}  ${call.summary.padEnd(34)} ${call.verdict}`);
    lines.push("", `Wrote, in ${displayPath(dir)}:`);
    lines.push(`  session.aarl           the signed record (${verified.lines} lines)`);
    lines.push("  signing.key            the private signing key (mode 0600): keep it secret");
    lines.push("  signing.pub            the public key a verifier needs (a trust store of one key: --trust-store)");
    lines.push("  session.envelope/      the verbatim request and response bytes, kept apart so they can be redacted");
    lines.push("  policy.yaml            the Policy Set every call was decided by (and policy-stricter.yaml, an edit of it)");
    lines.push(`  session-tampered.aarl  a copy with one byte changed (line ${change.line}, byte ${change.offset}: '${change.from}' -> '${change.to}')`);
    lines.push(`  session.checkpoint     a signed checkpoint of all ${verified.lines} lines (C2SP), to keep apart from the record`);
    lines.push(`  proofs/                proofs of the ${proved.length} lines of ${PROVED_CALL} alone, for someone who must not see the rest`, "");
    lines.push(`$ ${aegis} verify --key ${key.publicKeyHex} ${shown}`, verifyText(verified).trimEnd(), "");
    lines.push(`$ ${aegis} verify --key ${key.publicKeyHex} ${shownTampered}`, verifyText(caught).trimEnd(), "");
    lines.push("A stranger holding only the public key checks the record with:", `  ${aegis} verify --key ${key.publicKeyHex} ${shown}`, "");
    const shownDir = displayPath(dir);
    const at = (name: string): string => shellWord(join(shownDir, name));
    const shownProofs = proved.map((p) => shellWord(p.file)).join(" ");
    lines.push(`$ ${aegis} proof verify --key ${key.publicKeyHex} ${shownProofs}`, ...proved.map((p) => p.line), "");
    lines.push(
      `A stranger given only ${PROVED_CALL}'s proofs checks them, without the record, with:`,
      `  ${aegis} proof verify --key ${key.publicKeyHex} ${at("proofs")}/*.tlog-proof`,
      `and whoever keeps the checkpoint finds a record later cut short or rewritten with:`,
      `  ${aegis} verify --key ${key.publicKeyHex} --checkpoint ${at("session.checkpoint")} ${shown}`,
      "",
    );
    lines.push("An operator asks what a stricter policy would have changed, and whether every request's bytes are kept:");
    lines.push(
      `  ${aegis} recheck --policy ${at("policy-stricter.yaml")} ${shown}`,
      `  ${aegis} envelope verify --envelope ${at("session.envelope")} ${shown}`,
    );
    lines.push(
      "",
      "Anyone would rather look: one HTML file that verifies the record again in the browser that opens it, and shows every call:",
      `  ${aegis} report --key ${key.publicKeyHex} --policy ${at("policy-stricter.yaml")} --envelope ${at("session.envelope")} --out ${at("report.html")} ${shown}`,
    );
    lines.push(`(\`${aegis} show\` gives a readable account of each call; \`${aegis} --help\` lists every command)`);
    await this.out(`${lines.join("\n")}\n`);
    return verified.verdict.status === "verified" && caught.verdict.status === "tampered" && proved.every((p) => p.ok) ? 0 : 1;
  }

  /** Checkpoint the record, prove every Line of one call under it, and check each proof as a stranger would. */
  private async checkpointAndProve(dir: string, record: string, key: SigningKey, callId: string): Promise<{ file: string; line: string; ok: boolean }[]> {
    const tree = await recordTree(record);
    const checkpoint = signCheckpoint({ origin: defaultOrigin(tree.firstLineHash), size: tree.size, root: tree.root, extensions: [] }, key);
    await writeFile(join(dir, "session.checkpoint"), checkpoint, { mode: PRIVATE_FILE_MODE });
    const result = await proveLines(record, Buffer.from(checkpoint), callLines(callId));
    if (result.code !== "proved") throw new CliError({ code: "internal", detail: `the demo could not prove ${callId}: ${result.code}` });
    const paths = await writeProofs(join(dir, "proofs"), result.proofs);
    return result.proofs.map((p, i) => {
      // What `aegis proof verify` prints for it, word for word: the same check, the same text.
      const file = displayPath(paths[i] ?? "");
      const check = checked(file, checkProof(Buffer.from(p.text), [key.publicKey]), 0);
      return { file, line: checkedText(check), ok: check.ok };
    });
  }

  /** The directory must be new, empty, or an earlier demo's: never clobber someone's files. */
  private async prepare(dir: string): Promise<void> {
    try {
      if (existsSync(dir)) {
        const present = await readdir(dir);
        if (present.length > 0 && !present.includes(MARKER)) {
          throw new CliError({ code: "output_dir", path: dir, detail: "the directory is not empty and was not made by aegis demo" });
        }
        if (present.length > 0 && !this.force) {
          throw new CliError({
            code: "output_dir",
            path: dir,
            detail:
              "an earlier demo's directory: running again would replace its record and its signing key; pass --force to replace them, or choose another --out",
          });
        }
        for (const name of FILES) await rm(join(dir, name), { force: true, recursive: true });
      }
      await makeDirectories(dir);
      await writeFile(join(dir, MARKER), "made by `aegis demo`; the demo may replace the files in this directory\n");
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError({ code: "output_dir", path: dir, detail: describeIoError(error) });
    }
  }
}

/** Copy the record and change one byte inside a path in the third line's decision axes. */
async function alterOneByte(from: string, to: string): Promise<{ line: number; offset: number; from: string; to: string }> {
  const bytes = await readFile(from);
  const target = bytes.indexOf("notes.md");
  const offset = target + "notes.".length;
  const before = String.fromCharCode(bytes[offset] ?? 0);
  bytes[offset] = "n".charCodeAt(0);
  // A copy of the record: as private as the record (ADR 0017).
  await writeFile(to, bytes, { mode: PRIVATE_FILE_MODE });
  const line = bytes.subarray(0, offset).toString("latin1").split("\n").length;
  return { line, offset, from: before, to: "n" };
}
