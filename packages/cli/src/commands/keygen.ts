import { existsSync } from "node:fs";
import { basename } from "node:path";
import { Command, Option } from "clipanion";
import { SigningKey } from "@aegis/format";
import { publicKeyPathOf, writePublicKeyFile, KeyFileError, writeKeyFile } from "@aegis/format/internal";
import { AegisCommand } from "../command.js";
import type { ExitCode } from "../exit-code.js";
import { CliError } from "../fault.js";

export class KeygenCommand extends AegisCommand {
  static override paths = [["keygen"]];

  static override usage = Command.Usage({
    description: "Generate an Ed25519 signing key for writing records",
    details: `
      Writes the 32-byte seed as 64 lowercase hex to \`--out\`, with mode 0600, in the same format as the Rust aegis \`keygen\`. Prints the public key, which verifiers pass to \`aegis verify --key\`, and its \`key_id\` fingerprint, which records carry.

      Also writes the public key beside it (\`signing.key\` -> \`signing.pub\`, any other name -> \`<name>.pub\`), mode 0644, as a first line \`# aegis ed25519 public key\` and then the key: a trust store of one key (\`aegis verify --trust-store signing.pub\`, for the Rust aegis too), in a form no signing-key reader takes, so that it cannot be handed to \`--signing-key\` by mistake.

      Refuses to overwrite an existing file unless \`--force\` is given. Keep the key file private; publish the public key.
    `,
    examples: [
      ["Generate a key (and signing.pub beside it)", "aegis keygen --out ~/.config/aegis/signing.key"],
      ["Replace an existing key", "aegis keygen --out signing.key --force"],
    ],
  });

  out_ = Option.String("--out", { required: true, description: "Where to write the key file (its public key goes beside it, as .pub)" });
  force = Option.Boolean("--force", false, { description: "Overwrite an existing key file and its public key file" });

  protected async run(): Promise<ExitCode> {
    if (basename(this.out_).endsWith(".pub")) {
      throw new CliError({
        code: "usage",
        command: "keygen",
        message: `--out ${this.out_}: a name ending in .pub is a public key file's; give --out the signing key's name (its public key goes beside it)`,
      });
    }
    const publicPath = publicKeyPathOf(this.out_);
    const key = SigningKey.generate();
    try {
      // Both refused before either is written: a new key beside an old public key would pin
      // records to the wrong key.
      if (!this.force && existsSync(publicPath)) throw new KeyFileError({ code: "exists", path: publicPath });
      await writeKeyFile(this.out_, key, { force: this.force });
      await writePublicKeyFile(publicPath, key.publicKeyHex, { force: this.force });
    } catch (error) {
      if (error instanceof KeyFileError) throw new CliError({ code: "key_file", fault: error.fault });
      throw error;
    }
    await this.out(`public_key ${key.publicKeyHex}\nkey_id ${key.keyId}\n`);
    this.context.stderr.write(
      `signing key written to ${this.out_}\npublic key written to ${publicPath}\npin records from this key with: aegis verify --key ${key.publicKeyHex} <PATH> (or --trust-store ${publicPath})\n`,
    );
    return 0;
  }
}
