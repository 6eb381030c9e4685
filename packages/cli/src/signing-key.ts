import { KeyFileError, readKeyFile, type SigningKey } from "@aegis/format";
import { CliError } from "./fault.js";

/** The signing key at `path`, or the key-file fault a user can act on (`--signing-key`). */
export async function readSigningKey(path: string): Promise<SigningKey> {
  try {
    return await readKeyFile(path);
  } catch (error) {
    if (error instanceof KeyFileError) throw new CliError({ code: "key_file", fault: error.fault });
    throw error;
  }
}
