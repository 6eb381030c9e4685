import type { SignatureToCheck } from "../crypto/signing.js";
import { hexInto } from "../wire/hex.js";

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
const UTF8 = new TextEncoder();

export class SignatureBatch {
  private readonly keys: string[] = [];
  private readonly keyIndex = new Map<string, number>();
  // Arrays of their own (byte offset 0), so that `encode` can hand their memory over.
  private buffer: Uint8Array;
  private view: DataView;
  private length = 0;
  count = 0;

  constructor(capacity = 1 << 17) {
    this.buffer = new Uint8Array(capacity);
    this.view = new DataView(this.buffer.buffer);
  }

  add(claim: SignatureToCheck, message: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    this.reserve(HEADER + message.length * 3);
    const at = this.length;
    this.finishCheck(claim, at, UTF8.encodeInto(message, this.buffer.subarray(at + HEADER)).written);
  }

  /** A check whose message is `row` without its bytes [start, end): copied, never decoded. */
  addCut(claim: SignatureToCheck, row: Uint8Array, start: number, end: number): void {
    const length = row.length - (end - start);
    this.reserve(HEADER + length);
    const at = this.length;
    this.buffer.set(row.subarray(0, start), at + HEADER);
    this.buffer.set(row.subarray(end), at + HEADER + start);
    this.finishCheck(claim, at, length);
  }

  private finishCheck(claim: SignatureToCheck, at: number, length: number): void {
    let key = this.keyIndex.get(claim.key.hex);
    if (key === undefined) {
      key = this.keys.length;
      this.keys.push(claim.key.hex);
      this.keyIndex.set(claim.key.hex, key);
    }
    this.view.setUint16(at, key, true);
    this.view.setUint32(at + 2, length, true);
    hexInto(claim.signature, this.buffer, at + 6);
    this.length = at + HEADER + length;
    this.count++;
  }

  /** The batch as sent; the buffer is handed over, so the batch is not used again. */
  encode(): EncodedBatch {
    return { keys: this.keys, bytes: this.buffer.buffer as ArrayBuffer, length: this.length, count: this.count };
  }

  private reserve(more: number): void {
    // Stryker disable next-line EqualityOperator: equivalent E24
    if (this.length + more <= this.buffer.length) return;
    // Stryker disable next-line ArithmeticOperator: equivalent E25
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + more));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }
}

/** Each check of an encoded batch, in order: its key's hex, its message and its signature. */
export function* checksOf(batch: EncodedBatch): Generator<{ readonly key: string; readonly message: Uint8Array; readonly signature: Uint8Array }> {
  const bytes = new Uint8Array(batch.bytes, 0, batch.length);
  const view = new DataView(batch.bytes, 0, batch.length);
  let at = 0;
  while (at < batch.length) {
    const key = batch.keys[view.getUint16(at, true)];
    const length = view.getUint32(at + 2, true);
    if (key === undefined) throw new Error("signature batch: key index out of range");
    yield { key, signature: bytes.subarray(at + 6, at + 70), message: bytes.subarray(at + HEADER, at + HEADER + length) };
    at += HEADER + length;
  }
}
