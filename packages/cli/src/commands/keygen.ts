import { Command, Option } from "clipanion";
import { KeyFileError, SigningKey, writeKeyFile } from "@aegis/format";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";

export class KeygenCommand extends AegisCommand {
  static override paths = [["keygen"]];

  static override usage = Command.Usage({
    description: "Generate an Ed25519 signing key for writing records",
    details: `
      Writes the 32-byte seed as 64 lowercase hex to \`--out\`, with mode 0600, in the same format as the Rust aegis \`keygen\`. Prints the public key, which verifiers pass to \`aegis verify --key\`, and its \`key_id\` fingerprint, which records carry.

      Refuses to overwrite an existing file unless \`--force\` is given. Keep the key file private; publish the public key.
    `,
    examples: [
      ["Generate a key", "aegis keygen --out ~/.config/aegis/signing.key"],
      ["Replace an existing key", "aegis keygen --out signing.key --force"],
    ],
  });

  out_ = Option.String("--out", { required: true, description: "Where to write the key file" });
  force = Option.Boolean("--force", false, { description: "Overwrite an existing key file" });

  protected async run(): Promise<ExitCode> {
    const key = SigningKey.generate();
    try {
      await writeKeyFile(this.out_, key, { force: this.force });
    } catch (error) {
      if (error instanceof KeyFileError) throw new CliError({ code: "key_file", fault: error.fault });
      throw error;
    }
    await this.out(`public_key ${key.publicKeyHex}\nkey_id ${key.keyId}\n`);
    this.context.stderr.write(`signing key written to ${this.out_}\npin records from this key with: aegis verify --key ${key.publicKeyHex} <PATH>\n`);
    return 0;
  }
}
