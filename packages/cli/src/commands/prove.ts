import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Command, Option } from "clipanion";
import { describeIoError, unmatched } from "@aegis/format/internal";
import { PRIVATE_FILE_MODE, makeDirectories } from "@aegis/format/durable";
import { callLines, lineNumber, proveLines, type LineProofs } from "@aegis/proof";
import { match } from "ts-pattern";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { readProofInput, statedCheckpoint } from "../proof-files.js";
import { rereadableRecord } from "../record-input.js";

export class ProveCommand extends AegisCommand {
  static override paths = [["prove"]];

  static override usage = Command.Usage({
    description: "Prove one Line, or every Line of one call, under a checkpoint",
    details: `
      Writes \`c2sp.org/tlog-proof@v1\` proofs (SPEC §19.3): each holds the Line's canonical bytes, its index, the Merkle path to the root of \`--checkpoint\`, and the checkpoint itself, so that \`aegis proof verify\` checks it with the public key alone, without the record.

      With \`--line N\`, prints the proof of Line N. With \`--call ID --out DIR\`, writes one \`<N>.tlog-proof\` per Line of that call (its intent, its outcome, and the \`decision\` answering its park, if any) and prints their paths.

      The checkpoint must be signed by the key of the Session that holds its last Line, and its root must be the tree of the record's first Lines: a record that no longer matches its checkpoint is refused.

      Exit codes: 0 written, 1 refused (no such Line or call, a checkpoint that does not match), 2 the record or checkpoint could not be read.
    `,
    examples: [
      ["Prove Line 4", "aegis prove --checkpoint session.checkpoint --line 4 session.aarl > line-4.tlog-proof"],
      ["Prove every Line of one call", "aegis prove --checkpoint session.checkpoint --call call-7 --out proofs/ session.aarl"],
    ],
  });

  checkpoint = Option.String("--checkpoint", { required: true, description: "A checkpoint of the record (aegis checkpoint)" });
  line = Option.String("--line", { description: "The Line to prove, from 1" });
  call = Option.String("--call", { description: "Prove every Line of this call (needs --out)" });
  outDir = Option.String("--out", { description: "The directory for --call's proofs" });
  record = Option.String({ name: "RECORD" });

  protected async run(): Promise<ExitCode> {
    if ((this.line === undefined) === (this.call === undefined)) throw usage("give --line N or --call ID, one of them");
    if (this.call !== undefined && this.outDir === undefined) throw usage("--call writes one proof per Line: give --out DIR");
    if (this.line !== undefined && this.outDir !== undefined) throw usage("--out is for --call; --line prints its proof");
    const choice = this.line === undefined ? callLines(this.call ?? "") : lineNumber(parseLine(this.line));
    const bytes = await readProofInput(this.checkpoint, "checkpoint");
    statedCheckpoint(this.checkpoint, bytes);
    const input = await rereadableRecord(this.record);
    let result: LineProofs;
    try {
      result = await proveLines(input.path, bytes, choice);
    } finally {
      await input.dispose();
    }
    const proofs = match(result)
      .with({ code: "proved" }, (r) => r.proofs)
      .with({ code: "not_a_checkpoint" }, (r) => {
        throw new CliError({ code: "unreadable_input", what: "checkpoint", path: this.checkpoint, detail: r.detail });
      })
      .with({ code: "record_short" }, (r) =>
        refuse(
          `${input.shown} has fewer Lines that verify than the ${r.size} the checkpoint covers: cut short, or altered`,
          "run `aegis verify --checkpoint` on the record to see where",
        ),
      )
      .with({ code: "unsigned" }, (r) =>
        refuse(
          `${this.checkpoint} is not signed by the key of the Session holding Line ${r.size}`,
          "use a checkpoint of this record, made by aegis checkpoint with its Session's key",
        ),
      )
      .with({ code: "mismatch" }, (r) =>
        refuse(
          `the record's first ${r.size} Lines do not have the checkpoint's root: the record is not the one checkpointed, or it changed since`,
          "run `aegis verify --checkpoint` on the record to see where it differs",
        ),
      )
      .with({ code: "none_chosen" }, (r) =>
        refuse(
          this.line === undefined
            ? `no Line of call ${this.call ?? ""} among the ${r.size} the checkpoint covers`
            : `Line ${this.line} is not among the ${r.size} the checkpoint covers`,
          "run `aegis show` on the record to list its calls, or make a checkpoint of more Lines",
        ),
      )
      .exhaustive(unmatched);
    if (this.outDir === undefined) {
      await this.out(proofs[0]?.text ?? "");
      return 0;
    }
    const written = await writeProofs(this.outDir, proofs);
    await this.out(written.map((p) => `${p}\n`).join(""));
    return 0;
  }
}

/** Write each proof as `<Line number>.tlog-proof` in `dir`, never over an existing file. */
export async function writeProofs(dir: string, proofs: readonly { readonly index: number; readonly text: string }[]): Promise<string[]> {
  const paths: string[] = [];
  try {
    // A proof carries its Line, as private as the record: owner-only whatever the umask (ADR 0017).
    await makeDirectories(dir);
    for (const p of proofs) {
      const path = join(dir, `${p.index + 1}.tlog-proof`);
      await writeFile(path, p.text, { flag: "wx", mode: PRIVATE_FILE_MODE });
      paths.push(path);
    }
  } catch (error) {
    throw new CliError({ code: "output_dir", path: dir, detail: describeIoError(error) });
  }
  return paths;
}

function refuse(detail: string, help: string): never {
  throw new CliError({ code: "proof_refused", detail, help });
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", command: "prove", message });
}

function parseLine(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) throw usage(`--line ${JSON.stringify(text)}: a Line number, from 1`);
  return Number(text);
}
