import { SigningKey } from "@aegis/format";
import { SIGNATURE_TYPE, formatVerifierKey, noteVerifier, type NoteVerifier } from "@aegis/proof";
import { isKeyName } from "@aegis/proof/internal";

/**
 * A witness's signing key (SPEC §19.6), in the signed-note signer key form Go's `note`
 * package and the public witnesses read: `PRIVATE+KEY+<name>+<key ID, 8 hex>+<base64 of the
 * type byte 0x04 and the 32-byte Ed25519 seed>`, one line. The name is part of the key: a
 * cosignature line names it, and its vkey is `<name>+<key ID>+<base64 of 0x04 and the public key>`.
 */
export interface WitnessKey {
  readonly name: string;
  readonly key: SigningKey;
  /** Its verifier key, as clients are given it. */
  readonly verifier: NoteVerifier;
}

/** A new witness key named `name`. */
export function newWitnessKey(name: string): WitnessKey {
  if (!isKeyName(name)) throw new RangeError(`a witness's name is non-empty, with no space and no +: ${JSON.stringify(name)}`);
  return witnessKeyOf(name, SigningKey.generate());
}

/** The key's file text. */
export function formatWitnessKey(witness: WitnessKey): string {
  const id = witness.verifier.keyId.toString(16).padStart(8, "0");
  const seed = Buffer.concat([Buffer.from([SIGNATURE_TYPE.cosignatureV1]), Buffer.from(witness.key.exportSeedHex(), "hex")]);
  return `PRIVATE+KEY+${witness.name}+${id}+${seed.toString("base64")}\n`;
}

/** The key a file's text holds; or, when it holds none, why. */
export function parseWitnessKey(text: string): WitnessKey | string {
  const line = text.replace(/\r?\n$/, "");
  const parts = /^PRIVATE\+KEY\+([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(line);
  if (parts === null) return "not a witness key: one line, PRIVATE+KEY+<name>+<key ID>+<base64>";
  const [, name = "", id = "", encoded = ""] = parts;
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.toString("base64") !== encoded || bytes.length !== 33) return "its key is not the base64 of a type byte and 32 bytes";
  if (bytes[0] !== SIGNATURE_TYPE.cosignatureV1)
    return `its type is 0x${(bytes[0] ?? 0).toString(16).padStart(2, "0")}, not 0x04 (a cosignature/v1 witness key)`;
  const witness = witnessKeyOf(name, SigningKey.fromSeed(bytes.subarray(1)));
  if (witness.verifier.keyId !== Number.parseInt(id, 16)) return `its key ID ${id} is not the one its name and key make`;
  return witness;
}

function witnessKeyOf(name: string, key: SigningKey): WitnessKey {
  return { name, key, verifier: noteVerifier(name, SIGNATURE_TYPE.cosignatureV1, key.publicKey) };
}

/** The vkey clients are given: `<name>+<key ID>+<base64 of 0x04 and the public key>`. */
export function witnessVkey(witness: WitnessKey): string {
  return formatVerifierKey(witness.verifier);
}
