import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Command, Option } from "clipanion";
import { describeIoError, isJsonObject } from "@aegis/format/internal";
import { formatTlogProof, openCheckpoint, recordTree, type RecordTree, type RecordTreeOptions } from "@aegis/proof";
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
    const lineNumber = this.line === undefined ? undefined : parseLine(this.line);
    const bytes = await readProofInput(this.checkpoint, "checkpoint");
    const stated = statedCheckpoint(this.checkpoint, bytes);
    const input = await rereadableRecord(this.record);
    try {
      const callId = this.call;
      const parks = new Set<string>();
      const first = await this.treeOf(input.path, input.shown, stated.size, (line, index) => {
        if (lineNumber !== undefined) return index + 1 === lineNumber;
        const value = line.value;
        if (value["call_id"] === callId) {
          const policy = value["policy"];
          if (isJsonObject(policy) && typeof policy["approval_id"] === "string") parks.add(policy["approval_id"]);
          return true;
        }
        return line.lineType.token === "decision" && typeof value["approval_id"] === "string" && parks.has(value["approval_id"]);
      });
      const opening = openCheckpoint(bytes, first.sessionKey === undefined ? [] : [Buffer.from(first.sessionKey, "hex")]);
      if (opening.code !== "opened") {
        throw new CliError({
          code: "proof_refused",
          detail: `${this.checkpoint} is not signed by the key of the Session holding Line ${stated.size} (${opening.code.replaceAll("_", " ")})`,
          help: "use a checkpoint of this record, made by aegis checkpoint with its Session's key",
        });
      }
      if (!opening.checkpoint.root.equals(first.root)) {
        throw new CliError({
          code: "proof_refused",
          detail: `the record's first ${stated.size} Lines do not have the checkpoint's root: the record is not the one checkpointed, or it changed since`,
          help: "run `aegis verify --checkpoint` on the record to see where it differs",
        });
      }
      if (first.kept.length === 0) {
        throw new CliError({
          code: "proof_refused",
          detail:
            lineNumber === undefined
              ? `no Line of call ${callId ?? ""} among the ${stated.size} the checkpoint covers`
              : `Line ${lineNumber} is not among the ${stated.size} the checkpoint covers`,
          help: "run `aegis show` on the record to list its calls, or make a checkpoint of more Lines",
        });
      }
      const proofs = await this.treeOf(
        input.path,
        input.shown,
        stated.size,
        () => false,
        first.kept.map((k) => k.index),
      );
      const texts = first.kept.map((k) => ({
        index: k.index,
        text: formatTlogProof({ extra: k.data, index: k.index, hashes: proofs.inclusions.get(k.index) ?? [], checkpoint: bytes }),
      }));
      if (this.outDir === undefined) {
        await this.out(texts[0]?.text ?? "");
        return 0;
      }
      const dir = this.outDir;
      try {
        await mkdir(dir, { recursive: true });
        for (const t of texts) await writeFile(join(dir, `${t.index + 1}.tlog-proof`), t.text, { flag: "wx" });
      } catch (error) {
        throw new CliError({ code: "output_dir", path: dir, detail: describeIoError(error) });
      }
      await this.out(texts.map((t) => `${join(dir, `${t.index + 1}.tlog-proof`)}\n`).join(""));
      return 0;
    } finally {
      await input.dispose();
    }
  }

  private async treeOf(
    path: string,
    shown: string,
    size: number,
    keep: NonNullable<RecordTreeOptions["keep"]>,
    inclusions: readonly number[] = [],
  ): Promise<RecordTree> {
    try {
      return await recordTree(path, { size, keep, inclusions });
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      throw new CliError({
        code: "proof_refused",
        detail: `${shown} has fewer Lines that verify than the ${size} the checkpoint covers: cut short, or altered`,
        help: "run `aegis verify --checkpoint` on the record to see where",
      });
    }
  }
}

function usage(message: string): CliError {
  return new CliError({ code: "usage", command: "prove", message });
}

function parseLine(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text))) throw usage(`--line ${JSON.stringify(text)}: a Line number, from 1`);
  return Number(text);
}
