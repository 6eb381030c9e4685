import { readKeyFile, type SigningKey } from "@aegis/format";
import { KeyFileError } from "@aegis/format/internal";
import { CliError } from "./fault.js";

/**
 * The signing key at `path`, or the key-file fault a user can act on (`--signing-key`).
 * `publicKeys`: public keys given to the same command, which the file must not hold
 * (SPEC §13.6).
 */
export async function readSigningKey(path: string, publicKeys: readonly string[] = []): Promise<SigningKey> {
  try {
    return await readKeyFile(path, { publicKeys });
  } catch (error) {
    if (error instanceof KeyFileError) throw new CliError({ code: "key_file", fault: error.fault });
    throw error;
  }
}
