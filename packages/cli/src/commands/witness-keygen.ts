import { open } from "node:fs/promises";
import { hostname } from "node:os";
import { Command, Option } from "clipanion";
import { describeIoError, errnoOf } from "@aegis/format/internal";
import { isKeyName } from "@aegis/proof/internal";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";
import { formatWitnessKey, newWitnessKey, witnessVkey } from "../witness-key.js";

export class WitnessKeygenCommand extends AegisCommand {
  static override paths = [["witness", "keygen"]];

  static override usage = Command.Usage({
    description: "Generate a witness's signing key, and print its verifier key",
    details: `
      Writes a new witness signing key to \`--out\`, mode 0600, in the signed-note signer key form Go's witnesses read (\`PRIVATE+KEY+<name>+<key ID>+<base64>\`, type 0x04: \`c2sp.org/tlog-cosignature\` v1), and prints its verifier key (vkey) on stdout: what \`aegis checkpoint --witness\`, \`aegis wrap --witness\` and \`aegis verify --witness\` are given (SPEC §19.6).

      \`--name\` is the key name its cosignature lines carry, a schema-less URL by convention (\`witness.example.org/w1\`); by default \`aegis-witness/<host name>\`. Refuses to overwrite an existing file unless \`--force\` is given.
    `,
    examples: [
      ["Make a witness key", "aegis witness keygen --out /etc/aegis/witness.key --name witness.example.org/w1"],
      ["Replace it", "aegis witness keygen --out /etc/aegis/witness.key --name witness.example.org/w1 --force"],
    ],
  });

  out_ = Option.String("--out", { required: true, description: "Where to write the witness's signing key (mode 0600)" });
  name = Option.String("--name", { description: "The key name its cosignatures carry (default: aegis-witness/<host name>)" });
  force = Option.Boolean("--force", false, { description: "Overwrite an existing key file" });

  protected async run(): Promise<ExitCode> {
    const name = this.name ?? `aegis-witness/${hostname().replace(/[\s+]/g, "-") || "localhost"}`;
    if (!isKeyName(name))
      throw new CliError({
        code: "usage",
        command: "witness keygen",
        message: `--name ${JSON.stringify(name)}: a key name is non-empty, with no space and no +`,
      });
    const witness = newWitnessKey(name);
    let handle;
    try {
      handle = await open(this.out_, this.force ? "w" : "wx", 0o600);
    } catch (error) {
      const exists = errnoOf(error) === "EEXIST";
      throw new CliError({
        code: "witness",
        problem: "key",
        detail: `${this.out_}: ${exists ? "the file exists" : describeIoError(error)}`,
        help: exists
          ? "pass --force to replace it (the old key is then lost: clients that trust it must be given the new one), or choose another --out"
          : "check --out: its directory must exist and be writable",
      });
    }
    try {
      // The umask may have taken the owner's bits: 0600 whatever it is.
      await handle.chmod(0o600);
      await handle.truncate(0);
      await handle.writeFile(formatWitnessKey(witness));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.out(`${witnessVkey(witness)}\n`);
    this.context.stderr.write(`witness key written to ${this.out_}; give clients the verifier key above\n`);
    return 0;
  }
}
