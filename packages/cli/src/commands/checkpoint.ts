import { Command, Option } from "clipanion";
import { describeVerdict } from "@aegis/format";
import { defaultOrigin, isKeyName, recordTree, signCheckpoint } from "@aegis/proof";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { rereadableRecord } from "../record-input.js";
import { readSigningKey } from "../signing-key.js";

export class CheckpointCommand extends AegisCommand {
  static override paths = [["checkpoint"]];

  static override usage = Command.Usage({
    description: "Sign a checkpoint (a C2SP tree head) over a record's first Lines",
    details: `
      Prints a \`c2sp.org/tlog-checkpoint\` signed note: the origin, the number of Lines, and the RFC 6962 Merkle root of the record's first \`--size\` Lines (default: all), each Line's leaf its canonical form, signed with \`--signing-key\` under the origin as key name (SPEC §19).

      A checkpoint kept apart from the record later proves that the record held those Lines: \`aegis verify --checkpoint\` finds a record cut short, and anchors a crashed Session's tail; \`aegis prove\` proves one Line or one call to someone who has only the checkpoint and the public key.

      Refuses a record that is Tampered, a \`--size\` beyond the Lines that verify, and a key that is not the key of the Session holding Line \`--size\`. The default origin names the record by its first Line's \`line_hash\`, so two records never share one.

      Exit codes: 0 printed, 1 refused, 2 the record or the key could not be read.
    `,
    examples: [
      ["Checkpoint a whole record", "aegis checkpoint --signing-key signing.key session.aarl > session.checkpoint"],
      ["The first 5 Lines, under a chosen origin", "aegis checkpoint --signing-key signing.key --origin example.org/aegis/test --size 5 session.aarl"],
    ],
  });

  signingKey = Option.String("--signing-key", { required: true, description: "The key file of the Session that holds the last Line covered (aegis keygen)" });
  origin = Option.String("--origin", { description: "The checkpoint's origin and key name (default: from the record's first Line)" });
  size = Option.String("--size", { description: "How many Lines from the first to cover (default: all)" });
  json = Option.Boolean("--json", false, { description: "Print one JSON document instead of the note" });
  record = Option.String({ name: "RECORD" });

  protected async run(): Promise<ExitCode> {
    const size = this.size === undefined ? undefined : parseSize(this.size);
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
      const note = signCheckpoint({ origin, size: tree.size, root: tree.root, extensions: [] }, key);
      if (this.json) {
        await this.out(
          `${JSON.stringify({ schema: "aegis.checkpoint/1", origin, size: tree.size, root: tree.root.toString("base64"), checkpoint: note }, null, 2)}\n`,
        );
      } else {
        await this.out(note);
      }
      return 0;
    } finally {
      await record.dispose();
    }
  }
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
