import type { SignatureToCheck } from "../crypto/signing.js";

/**
 * Signature checks on their way to a worker thread, as one transferable buffer: per check,
 * the index of its key (u16), the length of its message (u32), the 64 signature bytes and
 * the message. Keys travel once per batch as hex; a record has few.
 */
export interface EncodedBatch {
  readonly keys: readonly string[];
  readonly bytes: ArrayBuffer;
  readonly length: number;
  readonly count: number;
}

const HEADER = 2 + 4 + 64;

export class SignatureBatch {
  private readonly keys: string[] = [];
  private readonly keyIndex = new Map<string, number>();
  private buffer: Buffer;
  private length = 0;
  count = 0;

  constructor(capacity = 1 << 17) {
    this.buffer = ownedBuffer(capacity);
  }

  get bytes(): number {
    return this.length;
  }

  add(claim: SignatureToCheck, message: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    this.reserve(HEADER + message.length * 3);
    const at = this.length;
    this.finishCheck(claim, at, this.buffer.write(message, at + HEADER, "utf8"));
  }

  /** A check whose message is `row` without its bytes [start, end): copied, never decoded. */
  addCut(claim: SignatureToCheck, row: Buffer, start: number, end: number): void {
    const length = row.length - (end - start);
    this.reserve(HEADER + length);
    const at = this.length;
    row.copy(this.buffer, at + HEADER, 0, start);
    row.copy(this.buffer, at + HEADER + start, end);
    this.finishCheck(claim, at, length);
  }

  private finishCheck(claim: SignatureToCheck, at: number, length: number): void {
    let key = this.keyIndex.get(claim.key.hex);
    if (key === undefined) {
      key = this.keys.length;
      this.keys.push(claim.key.hex);
      this.keyIndex.set(claim.key.hex, key);
    }
    this.buffer.writeUInt16LE(key, at);
    this.buffer.writeUInt32LE(length, at + 2);
    this.buffer.write(claim.signature, at + 6, "hex");
    this.length = at + HEADER + length;
    this.count++;
  }

  /** The batch as sent; the buffer is handed over, so the batch is not used again. */
  encode(): EncodedBatch {
    return { keys: this.keys, bytes: this.buffer.buffer as ArrayBuffer, length: this.length, count: this.count };
  }

  private reserve(more: number): void {
    if (this.length + more <= this.buffer.length) return;
    const grown = ownedBuffer(Math.max(this.buffer.length * 2, this.length + more));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}

/** Each check of an encoded batch, in order: its key's hex, its message and its signature. */
export function* checksOf(batch: EncodedBatch): Generator<{ readonly key: string; readonly message: Uint8Array; readonly signature: Uint8Array }> {
  const bytes = Buffer.from(batch.bytes, 0, batch.length);
  let at = 0;
  while (at < batch.length) {
    const key = batch.keys[bytes.readUInt16LE(at)];
    const length = bytes.readUInt32LE(at + 2);
    if (key === undefined) throw new Error("signature batch: key index out of range");
    yield { key, signature: bytes.subarray(at + 6, at + 70), message: bytes.subarray(at + HEADER, at + HEADER + length) };
    at += HEADER + length;
  }
}

/** A buffer over an ArrayBuffer of its own: Buffer.allocUnsafe may share Node's pool, which cannot be transferred. */
function ownedBuffer(size: number): Buffer {
  return Buffer.from(new ArrayBuffer(size));
}
