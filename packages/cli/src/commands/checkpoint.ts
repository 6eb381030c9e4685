import { Command, Option } from "clipanion";
import { describeVerdict } from "@aegis/format";
import { defaultOrigin, formatVerifierKey, pushCheckpoint, recordTree, signCheckpoint, type PushResult } from "@aegis/proof";
import { isKeyName } from "@aegis/proof/internal";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { rereadableRecord } from "../record-input.js";
import { readSigningKey } from "../signing-key.js";
import { describePush, witnessTargets } from "../witness-targets.js";

export class CheckpointCommand extends AegisCommand {
  static override paths = [["checkpoint"]];

  static override usage = Command.Usage({
    description: "Sign a checkpoint (a C2SP tree head) over a record's first Lines",
    details: `
      Prints a \`c2sp.org/tlog-checkpoint\` signed note: the origin, the number of Lines, and the RFC 6962 Merkle root of the record's first \`--size\` Lines (default: all), each Line's leaf its canonical form, signed with \`--signing-key\` under the origin as key name (SPEC §19).

      A checkpoint kept apart from the record later proves that the record held those Lines: \`aegis verify --checkpoint\` finds a record cut short, and anchors a crashed Session's tail; \`aegis prove\` proves one Line or one call to someone who has only the checkpoint and the public key.

      Refuses a record that is Tampered, a \`--size\` beyond the Lines that verify, and a key that is not the key of the Session holding Line \`--size\`. The default origin names the record by its first Line's \`line_hash\`, so two records never share one.

      With \`--witness VKEY@URL\` (repeatable), the checkpoint is pushed to each witness as \`c2sp.org/tlog-witness\` says (SPEC §19.6): with the size it last cosigned for the origin (0, then the size a 409 names) and the consistency proof from it; each cosignature that comes back is checked against \`VKEY\` and added to the checkpoint printed. A witness that does not answer within 10 s, or answers with an error, is named on stderr and the others still cosign; \`--min-witnesses N\` exits 1 when fewer did. A witness that holds a larger tree for the origin than the record has (the record was cut), or refuses the consistency proof (it was rewritten), is evidence: stderr names it and the size it holds, and the exit code is 1.

      Exit codes: 0 printed, 1 refused (or a witness's evidence, or too few cosignatures), 2 the record or the key could not be read.
    `,
    examples: [
      ["Checkpoint a whole record", "aegis checkpoint --signing-key signing.key session.aarl > session.checkpoint"],
      ["The first 5 Lines, under a chosen origin", "aegis checkpoint --signing-key signing.key --origin example.org/aegis/test --size 5 session.aarl"],
      [
        "Anchor it: cosigned by two witnesses, or exit 1",
        "aegis checkpoint --signing-key signing.key --witness 'w1.example.org+1a2b3c4d+BA...@https://w1.example.org' --witness 'w2.example.org+5e6f7a8b+BA...@https://w2.example.org' --min-witnesses 2 session.aarl > session.checkpoint",
      ],
    ],
  });

  signingKey = Option.String("--signing-key", { required: true, description: "The key file of the Session that holds the last Line covered (aegis keygen)" });
  origin = Option.String("--origin", { description: "The checkpoint's origin and key name (default: from the record's first Line)" });
  size = Option.String("--size", { description: "How many Lines from the first to cover (default: all)" });
  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of the note" });
  witnesses = Option.Array("--witness", [], { arity: 1, description: "VKEY@URL: push the checkpoint to this witness and add its cosignature (repeatable)" });
  minWitnesses = Option.String("--min-witnesses", { description: "With --witness: exit 1 unless at least N witnesses cosigned" });
  record = Option.String({ name: "RECORD" });

  protected async run(): Promise<ExitCode> {
    const size = this.size === undefined ? undefined : parseSize(this.size);
    const targets = witnessTargets(this.witnesses, "checkpoint");
    const min = this.minWitnesses === undefined ? 0 : parseCount(this.minWitnesses, targets.length);
    if (this.origin !== undefined && !isKeyName(this.origin)) {
      throw new CliError({
        code: "usage",
        command: "checkpoint",
        message: `--origin ${JSON.stringify(this.origin)}: an origin is non-empty, with no space and no +`,
      });
    }
    const key = await readSigningKey(this.signingKey);
    const record = await rereadableRecord(this.record);
    try {
      const tree = await recordTree(record.path, size === undefined ? {} : { size }).catch((error: unknown) => {
        if (error instanceof RangeError) return undefined;
        throw error;
      });
      if (tree === undefined || tree.verification.verdict.status === "tampered") {
        const verification = tree?.verification;
        const detail =
          verification === undefined || verification.verdict.status !== "tampered"
            ? `it has fewer than ${size ?? 0} Lines that verify`
            : `it does not verify: ${describeVerdict(verification).split("\n")[0] ?? ""}`;
        const help =
          verification === undefined
            ? `choose a --size of at most the Lines the record holds (\`aegis verify\` counts them)`
            : "run `aegis verify` on the record; a checkpoint vouches only for Lines that verify";
        throw new CliError({ code: "checkpoint_refused", path: record.shown, detail, help });
      }
      if (tree.size === 0)
        throw new CliError({ code: "checkpoint_refused", path: record.shown, detail: "it holds no Line", help: "checkpoint a record that holds Lines" });
      if (tree.sessionKey !== key.publicKeyHex) {
        throw new CliError({
          code: "checkpoint_refused",
          path: record.shown,
          detail: `Line ${tree.size} is in a Session signed by ${tree.sessionKey ?? "no key"}, not by this key (${key.publicKeyHex})`,
          help: "sign with the key of the Session that holds the last Line covered, or choose another --size",
        });
      }
      if (key.isInsecureDevKey)
        this.context.stderr.write("warning: signed with the published development key: this checkpoint proves nothing about who made it\n");
      const origin = this.origin ?? defaultOrigin(tree.firstLineHash);
      const signed = signCheckpoint({ origin, size: tree.size, root: tree.root, extensions: [] }, key);
      // Each witness at once, each bounded: one that hangs costs its 10 s, not the others'.
      const pushed = await Promise.all(targets.map((t) => pushCheckpoint(signed, t, record.path)));
      for (const result of pushed) {
        const said = describePush(result);
        if (said !== undefined) this.context.stderr.write(`aegis checkpoint: ${said}\n`);
      }
      const cosignatures = pushed.flatMap((r) => (r.code === "cosigned" ? [r.line] : []));
      const note = `${signed}${cosignatures.join("")}`;
      const evidence = pushed.some((r) => r.code === "evidence");
      if (targets.length > 0 && cosignatures.length < min)
        this.context.stderr.write(`aegis checkpoint: ${cosignatures.length} of the ${min} witnesses required cosigned\n`);
      if (this.json) {
        const witnesses = pushed.map((r) => ({ url: r.url, vkey: formatVerifierKey(r.verifier), ...pushJson(r) }));
        const doc = { schema: "aegis.checkpoint/1", origin, size: tree.size, root: tree.root.toString("base64"), checkpoint: note };
        await this.out(`${JSON.stringify(targets.length === 0 ? doc : { ...doc, witnesses }, null, 2)}\n`);
      } else {
        await this.out(note);
      }
      return evidence || cosignatures.length < min ? 1 : 0;
    } finally {
      await record.dispose();
    }
  }
}

/** A push's result in `--json`: `cosigned`, `evidence` (why, and the size the witness holds) or `fault` (its words). */
function pushJson(result: PushResult): Record<string, unknown> {
  switch (result.code) {
    case "cosigned":
      return { result: "cosigned", cosignature: result.line.trimEnd() };
    case "evidence":
      return { result: "evidence", why: result.why, witness_size: result.witnessSize };
    case "fault":
      return { result: "fault", detail: result.detail };
  }
}

/** `--min-witnesses N`: at most the witnesses given. */
function parseCount(text: string, given: number): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text) || Number(text) > given)
    throw new CliError({
      code: "usage",
      command: "checkpoint",
      message: `--min-witnesses ${JSON.stringify(text)}: a number from 0 to the ${given} --witness given`,
    });
  return Number(text);
}

function parseSize(text: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new CliError({
      code: "usage",
      command: "checkpoint",
      message: `--size ${JSON.stringify(text)}: a number of Lines, a decimal without leading zeroes`,
    });
  }
  return Number(text);
}
