import { decodeUtf8, unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { FaultError } from "@aegis/format";

/**
 * C2SP signed notes (`c2sp.org/signed-note`): a text ending in a newline, a blank line, then
 * one or more lines `— <key name> <base64(key ID || signature)>`. Parsing is strict and
 * bounded, as the record verifier's is: a handed-over note is attacker-controlled.
 */

/** The most bytes a note may have: far above a checkpoint with many cosignatures. */
export const MAX_NOTE_BYTES = 1 << 20;
/** The most signature lines a note may carry; the spec requires at least 16 be accepted. */
export const MAX_NOTE_SIGNATURES = 256;

const DASH = "\u2014 ";

/** One signature line of a note, undecoded beyond its key ID. */
export interface NoteSignature {
  /** The key name it claims. */
  readonly name: string;
  /** The first four bytes of the signature blob, big-endian: which key, with `name`. */
  readonly keyId: number;
  /** The bytes after the key ID: the algorithm's signature. */
  readonly signature: Buffer;
  /** The whole line, without its newline, as it appears in the note. */
  readonly line: string;
}

/** A note split into its text and its signature lines. */
export interface Note {
  /** The signed text, with its final newline. */
  readonly text: string;
  /** Its signature lines, in order; none is checked by parsing. */
  readonly signatures: readonly NoteSignature[];
}

/** Why a note was refused. */
export type NoteFault =
  | { readonly code: "too_large"; readonly size: number }
  | { readonly code: "not_utf8" }
  | { readonly code: "control_character"; readonly offset: number }
  | { readonly code: "no_signatures" }
  | { readonly code: "too_many_signatures"; readonly count: number }
  | { readonly code: "bad_signature_line"; readonly line: string; readonly detail: string }
  /** A well-formed note whose text is not a checkpoint's (origin, size, root). */
  | { readonly code: "not_a_checkpoint"; readonly detail: string };

/** A note that is not a well-formed signed note. */
export class NoteFormatError extends FaultError<NoteFault> {
  constructor(fault: NoteFault) {
    super("NoteFormatError", fault, describeNoteFault);
  }
}

/** The words of a {@link NoteFault}. */
function describeNoteFault(fault: NoteFault): string {
  return match(fault)
    .with({ code: "too_large" }, (f) => `${f.size} bytes, over the ${MAX_NOTE_BYTES}-byte limit for a note`)
    .with({ code: "not_utf8" }, () => "not UTF-8")
    .with({ code: "control_character" }, (f) => `a control character at byte ${f.offset}`)
    .with({ code: "no_signatures" }, () => "no signature lines after a blank line")
    .with({ code: "too_many_signatures" }, (f) => `${f.count} signature lines, over the limit of ${MAX_NOTE_SIGNATURES}`)
    .with({ code: "bad_signature_line" }, (f) => `signature line ${JSON.stringify(f.line)}: ${f.detail}`)
    .with({ code: "not_a_checkpoint" }, (f) => `not a checkpoint: ${f.detail}`)
    .exhaustive(unmatched);
}

/**
 * A key name as C2SP allows one (signed-note, "Format"): non-empty, no `+`, no Unicode space,
 * which is a White_Space character (SPEC §19.2: the list of §1.1, what Go's `unicode.IsSpace`
 * says). Not JavaScript's `\s`, which also takes U+FEFF.
 */
export function isKeyName(name: string): boolean {
  return name.length > 0 && !/[+\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u.test(name);
}

/** Canonical standard base64 (RFC 4648 §4): what re-encoding the decoded bytes gives back. */
export function decodeBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : undefined;
}

/**
 * Split a note into its text and signatures (C2SP signed-note, "Format").
 *
 * @throws NoteFormatError when it is not a well-formed signed note.
 */
export function parseNote(bytes: Uint8Array): Note {
  if (bytes.length > MAX_NOTE_BYTES) throw new NoteFormatError({ code: "too_large", size: bytes.length });
  const text = decodeUtf8(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (text === undefined) throw new NoteFormatError({ code: "not_utf8" });
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    // C2SP signed-note, "Format": no ASCII control character below U+0020 but newline (U+007F is allowed, as Go's note.Open allows it).
    if (c < 0x20 && c !== 0x0a) throw new NoteFormatError({ code: "control_character", offset: Buffer.byteLength(text.slice(0, i)) });
  }
  // The text ends at the last blank line; everything after it is signatures.
  const split = text.lastIndexOf("\n\n");
  if (split < 0 || !text.endsWith("\n")) throw new NoteFormatError({ code: "no_signatures" });
  const lines = text.slice(split + 2, -1).split("\n");
  if (lines.length > MAX_NOTE_SIGNATURES) throw new NoteFormatError({ code: "too_many_signatures", count: lines.length });
  const signatures = lines.map(parseSignatureLine);
  if (signatures.length === 0) throw new NoteFormatError({ code: "no_signatures" });
  return { text: text.slice(0, split + 1), signatures };
}

function parseSignatureLine(line: string): NoteSignature {
  const bad = (detail: string): never => {
    throw new NoteFormatError({ code: "bad_signature_line", line, detail });
  };
  if (!line.startsWith(DASH)) bad("does not start with an em dash and a space");
  const rest = line.slice(DASH.length);
  const space = rest.lastIndexOf(" ");
  if (space < 0) bad("no signature after the key name");
  const name = rest.slice(0, space);
  if (!isKeyName(name)) bad("the key name is empty or holds a space or a plus");
  const blob = decodeBase64(rest.slice(space + 1));
  if (blob === undefined) bad("the signature is not canonical base64");
  if (blob === undefined || blob.length < 5) return bad("the signature is shorter than a key ID and one byte");
  return { name, keyId: blob.readUInt32BE(0), signature: blob.subarray(4), line };
}

/** A note's signature line for `signature` by the key `name` with `keyId`. */
export function signatureLine(name: string, keyId: number, signature: Uint8Array): string {
  const blob = Buffer.alloc(4 + signature.length);
  blob.writeUInt32BE(keyId >>> 0, 0);
  blob.set(signature, 4);
  return `${DASH}${name} ${blob.toString("base64")}`;
}

/** The note of `text` (ending in a newline) with these signature lines. */
export function formatNote(text: string, lines: readonly string[]): string {
  return `${text}\n${lines.map((l) => `${l}\n`).join("")}`;
}
