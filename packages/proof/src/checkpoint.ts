import type { SigningKey } from "@aegis/format";
import { checkSignature, noteKeyId, noteVerifier, SIGNATURE_TYPE, verifierOf, type NoteVerifier } from "./keys.js";
import { decodeBase64, formatNote, NoteFormatError, parseNote, signatureLine, type Note, type NoteSignature } from "./note.js";

/**
 * Checkpoints (`c2sp.org/tlog-checkpoint`): a signed note whose text is the origin, the tree
 * size and the base64 root hash, one per line, then optional extension lines.
 */

/** A tree head: which log, how many leaves, and their root. */
export interface Checkpoint {
  /** The log's identity; also the name of the key that signs it. */
  readonly origin: string;
  /** The number of leaves: here, Lines of the record from its first. */
  readonly size: number;
  /** The RFC 6962 root of those leaves (32 bytes). */
  readonly root: Buffer;
  /** Extension lines, opaque; none in what aegis issues. */
  readonly extensions: readonly string[];
}

/** The note text of a checkpoint, final newline included. */
function checkpointText(checkpoint: Checkpoint): string {
  return [checkpoint.origin, String(checkpoint.size), checkpoint.root.toString("base64"), ...checkpoint.extensions].map((l) => `${l}\n`).join("");
}

/**
 * The checkpoint a note's text states.
 *
 * @throws NoteFormatError (`not_a_checkpoint`) when the text is not a checkpoint's.
 */
export function readCheckpointText(text: string): Checkpoint {
  const lines = text.slice(0, -1).split("\n");
  const [origin, size, root, ...extensions] = lines;
  const bad = (detail: string): never => {
    throw new NoteFormatError({ code: "not_a_checkpoint", detail });
  };
  if (!text.endsWith("\n") || origin === undefined || size === undefined || root === undefined) return bad("fewer than three lines");
  if (origin === "") bad("the origin is empty");
  if (!/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size)))
    bad(`the tree size ${JSON.stringify(size)} is not a decimal without leading zeroes`);
  const hash = decodeBase64(root);
  if (hash === undefined || hash.length !== 32) return bad("the root is not the base64 of 32 bytes");
  if (extensions.some((l) => l === "")) bad("an extension line is empty");
  return { origin, size: Number(size), root: hash, extensions };
}

/**
 * Sign `checkpoint` as its log: the note with one Ed25519 signature by `key` under the
 * checkpoint's origin as key name (C2SP tlog-checkpoint, "Signatures").
 */
export function signCheckpoint(checkpoint: Checkpoint, key: SigningKey): string {
  const text = checkpointText(checkpoint);
  const id = verifierOf(key, checkpoint.origin).keyId;
  return formatNote(text, [signatureLine(checkpoint.origin, id, key.sign(Buffer.from(text, "utf8")))]);
}

/** A witness's cosignature that checked. */
export interface Cosigned {
  /** The witness key, as given, whose cosignature checked. */
  readonly witness: NoteVerifier;
  /** When the witness says it cosigned, in POSIX seconds. */
  readonly timestamp: bigint;
}

/** What opening a checkpoint found. */
export type CheckpointOpening =
  | {
      readonly code: "opened";
      readonly checkpoint: Checkpoint;
      /** The log key whose signature checked. */
      readonly signedBy: NoteVerifier;
      /**
       * The witnesses given whose cosignatures checked: one entry per distinct witness public
       * key (SPEC §19.3), however many lines it signed and under however many names it was given.
       */
      readonly cosigned: readonly Cosigned[];
      /** The note, as parsed. */
      readonly note: Note;
    }
  /** Not a signed note, or not a checkpoint's text. */
  | { readonly code: "malformed"; readonly detail: string }
  /** No signature by any of the log keys given (the note may be signed by others). */
  | { readonly code: "unsigned"; readonly origin: string }
  /** A signature by a known key that does not check: the whole note is refused. */
  | { readonly code: "bad_signature"; readonly name: string; readonly keyId: number };

/** The message a `cosignature/v1` signs: its header, its time, then the note text. */
export function cosignedMessage(text: string, timestamp: bigint): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${timestamp}\n${text}`, "utf8");
}

/**
 * Open a checkpoint: parse the note, check the signature of the log key (one of
 * `publicKeys`, named by the checkpoint's origin, signature type 0x01) and of each witness in
 * `witnesses` that cosigned it. Signatures by keys not given are ignored, as C2SP requires;
 * a signature by a given key that does not check refuses the note. A witness is its public
 * key: a second cosignature line by a key already counted is checked, and not counted again.
 */
export function openCheckpoint(bytes: Uint8Array, publicKeys: readonly Uint8Array[], witnesses: readonly NoteVerifier[] = []): CheckpointOpening {
  let note: Note;
  let checkpoint: Checkpoint;
  try {
    note = parseNote(bytes);
    checkpoint = readCheckpointText(note.text);
  } catch (error) {
    if (error instanceof NoteFormatError) return { code: "malformed", detail: error.message };
    throw error;
  }
  const message = Buffer.from(note.text, "utf8");
  const logKeys = publicKeys.map((k) => ({ key: k, id: noteKeyId(checkpoint.origin, SIGNATURE_TYPE.ed25519, k) }));
  let signedBy: NoteVerifier | undefined;
  const cosigned: Cosigned[] = [];
  for (const sig of note.signatures) {
    if (sig.name === checkpoint.origin) {
      const known = logKeys.find((k) => k.id === sig.keyId);
      if (known !== undefined) {
        const verifier = noteVerifier(checkpoint.origin, SIGNATURE_TYPE.ed25519, known.key);
        if (!checkSignature(verifier, message, sig.signature)) return { code: "bad_signature", name: sig.name, keyId: sig.keyId };
        signedBy ??= verifier;
        continue;
      }
    }
    const witness = witnesses.find((w) => w.name === sig.name && w.keyId === sig.keyId);
    if (witness === undefined) continue;
    const timestamp = cosignatureTime(note.text, sig, witness);
    if (timestamp === undefined) return { code: "bad_signature", name: sig.name, keyId: sig.keyId };
    // SPEC §19.3: a quorum counts witnesses, not lines; one key written twice, or given
    // under two names, is one witness.
    if (!cosigned.some((c) => c.witness.publicKey.equals(witness.publicKey))) cosigned.push({ witness, timestamp });
  }
  if (signedBy === undefined) return { code: "unsigned", origin: checkpoint.origin };
  return { code: "opened", checkpoint, signedBy, cosigned: inOrderGiven(cosigned, witnesses), note };
}

/**
 * The witnesses that cosigned, in the order their keys were given, each under the first name
 * given for its key (SPEC §19.3): what a reader is told does not depend on the order, or the
 * names, of the note's lines, which anyone may rewrite.
 */
function inOrderGiven(cosigned: readonly Cosigned[], witnesses: readonly NoteVerifier[]): Cosigned[] {
  const ordered: Cosigned[] = [];
  for (const given of witnesses) {
    if (ordered.some((c) => c.witness.publicKey.equals(given.publicKey))) continue;
    const found = cosigned.find((c) => c.witness.publicKey.equals(given.publicKey));
    if (found !== undefined) ordered.push({ witness: given, timestamp: found.timestamp });
  }
  return ordered;
}

/**
 * The time of `signature`, a `cosignature/v1` line by `witness` over the note text `text`,
 * when it checks (C2SP tlog-cosignature: 8 bytes of big-endian time below 2^63, then Ed25519
 * over the cosigned message); undefined when it does not.
 */
export function cosignatureTime(text: string, signature: NoteSignature, witness: NoteVerifier): bigint | undefined {
  const timestamp = signature.signature.length === 72 ? signature.signature.readBigUInt64BE(0) : undefined;
  if (timestamp === undefined || timestamp >= 1n << 63n) return undefined;
  return checkSignature(witness, cosignedMessage(text, timestamp), signature.signature.subarray(8)) ? timestamp : undefined;
}

/**
 * Add a witness's `cosignature/v1` to a checkpoint note: 8 bytes of big-endian POSIX time,
 * then Ed25519 by `key` over the cosigned message (C2SP tlog-cosignature). What a witness
 * does once it has checked the checkpoint consistent with what it saw before; here for
 * witnesses of one's own and for tests.
 *
 * @throws NoteFormatError when `note` is not a signed note; RangeError for a time at or above 2^63.
 */
export function cosignCheckpoint(note: string, key: SigningKey, name: string, timestamp: bigint): string {
  if (timestamp < 0n || timestamp >= 1n << 63n) throw new RangeError("a cosignature's time is from 0 to 2^63 - 1");
  const parsed = parseNote(Buffer.from(note, "utf8"));
  const time = Buffer.alloc(8);
  time.writeBigUInt64BE(timestamp);
  const signature = Buffer.concat([time, key.sign(cosignedMessage(parsed.text, timestamp))]);
  const id = noteKeyId(name, SIGNATURE_TYPE.cosignatureV1, key.publicKey);
  return formatNote(parsed.text, [...parsed.signatures.map((s) => s.line), signatureLine(name, id, signature)]);
}
