import { cosignedMessage, readCheckpointText, type Checkpoint } from "../checkpoint.js";
import { SIGNATURE_TYPE, checkSignature, noteVerifier } from "../keys.js";
import { verifyConsistency } from "../merkle.js";
import { NoteFormatError, parseNote, signatureLine } from "../note.js";
import { SIZE_TYPE, parseAddCheckpoint } from "./protocol.js";
import type { SigningKey } from "@aegis/format";
import type { WitnessState } from "./witness-state.js";

/**
 * A witness (`aegis witness serve`, SPEC §19.6): `add-checkpoint` as `c2sp.org/tlog-witness`
 * says, every MUST of it, in its order. A request is checked and, when it passes, its tree is
 * recorded on disk before the cosignature is made; requests are taken one at a time, so the
 * check of `old` against what was cosigned and the write of the new tree are one step (the
 * specification's race, where a late request rolls the size back, cannot happen).
 */
export interface WitnessConfig {
  /** The witness's signing key, and its name: its cosignature lines carry the name. */
  readonly key: SigningKey;
  readonly name: string;
  /** Per origin, the Ed25519 public keys its checkpoints may be signed with. */
  readonly logs: ReadonlyMap<string, readonly Uint8Array[]>;
  readonly state: WitnessState;
  /** The cosignature's time, in POSIX seconds (default: now). */
  readonly now?: () => bigint;
}

/** What the witness answers: a status, and its body (a size is `text/x.tlog.size`). */
export interface WitnessAnswer {
  readonly status: 200 | 400 | 403 | 404 | 409 | 422;
  readonly type: "text/plain; charset=utf-8" | typeof SIZE_TYPE;
  readonly body: string;
}

export class Witness {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: WitnessConfig) {}

  /** Answer one `add-checkpoint` body. One request at a time: see above. */
  addCheckpoint(body: Buffer): Promise<WitnessAnswer> {
    const answer = this.queue.then(() => this.answer(body));
    this.queue = answer.catch(() => undefined);
    return answer;
  }

  private async answer(body: Buffer): Promise<WitnessAnswer> {
    const request = parseAddCheckpoint(body);
    if (request.code === "malformed") return text(400, `malformed request: ${request.detail}`);
    let checkpoint: Checkpoint;
    let note;
    try {
      note = parseNote(request.checkpoint);
      checkpoint = readCheckpointText(note.text);
    } catch (error) {
      if (error instanceof NoteFormatError) return text(400, `malformed checkpoint: ${error.message}`);
      throw error;
    }
    const keys = this.config.logs.get(checkpoint.origin);
    if (keys === undefined) return text(404, `unknown origin ${checkpoint.origin}`);
    // Signatures by keys this witness does not trust are ignored; one by a trusted key must verify.
    const message = Buffer.from(note.text, "utf8");
    const verifiers = keys.map((k) => noteVerifier(checkpoint.origin, SIGNATURE_TYPE.ed25519, k));
    let signed = false;
    for (const sig of note.signatures) {
      const verifier = verifiers.find((v) => v.name === sig.name && v.keyId === sig.keyId);
      if (verifier === undefined) continue;
      if (!checkSignature(verifier, message, sig.signature)) return text(403, "a signature by a trusted key of this origin does not verify");
      signed = true;
    }
    if (!signed) return text(403, `no trusted key of ${checkpoint.origin} signed this checkpoint`);
    if (request.old > checkpoint.size) return text(400, `old size ${request.old} is above the checkpoint's size ${checkpoint.size}`);
    const held = this.config.state.cosigned(checkpoint.origin);
    const heldSize = held?.size ?? 0;
    if (request.old !== heldSize) return { status: 409, type: SIZE_TYPE, body: `${heldSize}\n` };
    if (held !== undefined && request.old === checkpoint.size) {
      if (!held.root.equals(checkpoint.root)) return { status: 409, type: SIZE_TYPE, body: `${heldSize}\n` };
    } else if (held === undefined || request.old === 0) {
      if (request.proof.length > 0) return text(422, "the consistency proof from size 0 must be empty");
    } else if (!verifyConsistency(held.size, checkpoint.size, request.proof, held.root, checkpoint.root)) {
      return text(422, `the consistency proof from ${held.size} to ${checkpoint.size} does not verify`);
    }
    // On disk before anything is said of it: no cosignature of a tree this witness could forget.
    await this.config.state.record(checkpoint.origin, { size: checkpoint.size, root: checkpoint.root });
    return { status: 200, type: "text/plain; charset=utf-8", body: this.cosign(note.text) };
  }

  /** One `cosignature/v1` line (C2SP tlog-cosignature) over the checkpoint's note text. */
  private cosign(noteText: string): string {
    const { key, name } = this.config;
    const keyId = noteVerifier(name, SIGNATURE_TYPE.cosignatureV1, key.publicKey).keyId;
    const timestamp = this.config.now?.() ?? BigInt(Math.floor(Date.now() / 1000));
    const time = Buffer.alloc(8);
    time.writeBigUInt64BE(timestamp);
    const signature = Buffer.concat([time, key.sign(cosignedMessage(noteText, timestamp))]);
    return `${signatureLine(name, keyId, signature)}\n`;
  }
}

function text(status: WitnessAnswer["status"], body: string): WitnessAnswer {
  return { status, type: "text/plain; charset=utf-8", body: `${body}\n` };
}
