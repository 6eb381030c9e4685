import { createHash } from "node:crypto";
import { type SigningKey, FaultError } from "@aegis/format";
import { unmatched, verifyStrict, verifyingKey, type VerifyingKey } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { decodeBase64, isKeyName } from "./note.js";

/**
 * The keys of signed notes: who signed (a name and a 4-byte key ID, C2SP signed-note
 * "Signatures") and with what. Two signature types are understood: 0x01, a log's Ed25519
 * signature over the note text, and 0x04, a witness's timestamped Ed25519 cosignature
 * (`c2sp.org/tlog-cosignature`).
 */

/** C2SP signature type bytes this package understands. */
export const SIGNATURE_TYPE = { ed25519: 0x01, cosignatureV1: 0x04 } as const;
/** A signature type this package understands. */

/** SHA-256(name || 0x0A || type || public key)[:4], big-endian. */
export function noteKeyId(name: string, type: NoteVerifier["type"], publicKey: Uint8Array): number {
  return createHash("sha256")
    .update(name)
    .update(Buffer.from([0x0a, type]))
    .update(publicKey)
    .digest()
    .readUInt32BE(0);
}

/** A key that checks note signatures: a log's (0x01) or a witness's (0x04). */
export interface NoteVerifier {
  /** The key name its signature lines carry: a log's origin, or a witness's name. */
  readonly name: string;
  /** The 4-byte key ID, as a number, that its signatures start with. */
  readonly keyId: number;
  /** 0x01 for a log's signature, 0x04 for a witness's cosignature. */
  readonly type: (typeof SIGNATURE_TYPE)[keyof typeof SIGNATURE_TYPE];
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Buffer;
  /** The key as the strict Ed25519 rule reads it (SPEC §8.5). */
  readonly key: VerifyingKey;
}

/** Why a verifier key could not be read. */
export type VerifierKeyFault =
  | { readonly code: "bad_name"; readonly name: string }
  | { readonly code: "malformed"; readonly detail: string }
  | { readonly code: "unknown_type"; readonly type: number }
  | { readonly code: "key_id_mismatch"; readonly stated: number; readonly computed: number }
  | { readonly code: "not_a_key"; readonly detail: string };

/** A verifier key that is not one, with why. */
export class VerifierKeyError extends FaultError<VerifierKeyFault> {
  constructor(fault: VerifierKeyFault) {
    super("VerifierKeyError", fault, describeVerifierKeyFault);
  }
}

/** The words of a {@link VerifierKeyFault}. */
function describeVerifierKeyFault(fault: VerifierKeyFault): string {
  return match(fault)
    .with({ code: "bad_name" }, (f) => `key name ${JSON.stringify(f.name)} is empty or holds a space or a plus`)
    .with({ code: "malformed" }, (f) => f.detail)
    .with({ code: "unknown_type" }, (f) => `signature type 0x${f.type.toString(16).padStart(2, "0")} is not Ed25519 (0x01) or an Ed25519 cosignature (0x04)`)
    .with({ code: "key_id_mismatch" }, (f) => `the key ID ${hex8(f.stated)} is not the key's (${hex8(f.computed)})`)
    .with({ code: "not_a_key" }, (f) => `not an Ed25519 public key: ${f.detail}`)
    .exhaustive(unmatched);
}

function hex8(id: number): string {
  return id.toString(16).padStart(8, "0");
}

/**
 * A verifier for `publicKey` (32 bytes) under `name`.
 *
 * @throws VerifierKeyError `bad_name`, `not_a_key`.
 */
export function noteVerifier(name: string, type: NoteVerifier["type"], publicKey: Uint8Array): NoteVerifier {
  if (!isKeyName(name)) throw new VerifierKeyError({ code: "bad_name", name });
  const key = verifyingKey(publicKey);
  if (typeof key === "string") throw new VerifierKeyError({ code: "not_a_key", detail: key.replaceAll("_", " ") });
  return { name, keyId: noteKeyId(name, type, publicKey), type, publicKey: Buffer.from(publicKey), key };
}

/**
 * Read a verifier key in the vkey form Go's `note` package writes: the name, `+`, the key ID
 * as 8 lowercase hex, `+`, and the base64 of the type byte and the public key. The stated
 * key ID must be the key's.
 *
 * @throws VerifierKeyError when it is malformed, of another type, or its key ID is wrong.
 */
export function parseVerifierKey(text: string): NoteVerifier {
  // A name holds no `+`; the base64 after the second may (as Go's note.NewVerifier reads it).
  const trimmed = text.trim();
  const first = trimmed.indexOf("+");
  const second = first < 0 ? -1 : trimmed.indexOf("+", first + 1);
  const [name, id, blob] = second < 0 ? [] : [trimmed.slice(0, first), trimmed.slice(first + 1, second), trimmed.slice(second + 1)];
  if (name === undefined || id === undefined || blob === undefined) {
    throw new VerifierKeyError({ code: "malformed", detail: "a verifier key is <name>+<8 hex>+<base64>" });
  }
  if (!/^[0-9a-f]{8}$/.test(id)) throw new VerifierKeyError({ code: "malformed", detail: `key ID ${JSON.stringify(id)} is not 8 lowercase hex` });
  const bytes = decodeBase64(blob);
  if (bytes === undefined || bytes.length !== 33)
    throw new VerifierKeyError({ code: "malformed", detail: "the key is not canonical base64 of a type byte and 32 key bytes" });
  const type = bytes[0];
  if (type !== SIGNATURE_TYPE.ed25519 && type !== SIGNATURE_TYPE.cosignatureV1) throw new VerifierKeyError({ code: "unknown_type", type: type ?? -1 });
  const verifier = noteVerifier(name, type, bytes.subarray(1));
  const stated = Number.parseInt(id, 16);
  if (stated !== verifier.keyId) throw new VerifierKeyError({ code: "key_id_mismatch", stated, computed: verifier.keyId });
  return verifier;
}

/** The vkey text of a verifier: what {@link parseVerifierKey} reads. */
export function formatVerifierKey(verifier: NoteVerifier): string {
  return `${verifier.name}+${hex8(verifier.keyId)}+${Buffer.concat([Buffer.from([verifier.type]), verifier.publicKey]).toString("base64")}`;
}

/** The Ed25519 (0x01) verifier of a signing key's public half, under `name`. */
export function verifierOf(key: SigningKey, name: string): NoteVerifier {
  return noteVerifier(name, SIGNATURE_TYPE.ed25519, key.publicKey);
}

/** Strict Ed25519 (SPEC §8.5) of `signature` over `message` by `verifier`. */
export function checkSignature(verifier: NoteVerifier, message: Uint8Array, signature: Uint8Array): boolean {
  return verifyStrict(verifier.key, message, signature);
}
