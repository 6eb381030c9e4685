import { messageOf } from "@aegis/format/internal";
import { Decoder, Encoder } from "cbor-x";
import { MAX_REASON_BYTES } from "./layout.js";

/**
 * The head of a frame: the part of a record that is CBOR (SPEC §14.3). The data model is
 * restricted to two shapes, both CBOR arrays:
 *
 *   entry      [1, digest: bstr(32)]
 *   tombstone  [2, digest: bstr(32), redacted_at: tstr, reason: tstr, size: uint]
 *
 * cbor-x is lax when decoding (indefinite lengths, non-shortest integers, tags, invalid
 * UTF-8 replaced silently) and not canonical by default, so a head is accepted only when it
 * decodes to one of these shapes and re-encodes to exactly the bytes read (SPEC §14.3,
 * [M14.5]): one record has one encoding.
 */
export type Head =
  | { readonly kind: "entry"; readonly digest: string }
  | { readonly kind: "tombstone"; readonly digest: string; readonly redactedAt: string; readonly reason: string; readonly size: number };

export type HeadRead = { readonly ok: true; readonly head: Head } | { readonly ok: false; readonly detail: string };

const ENTRY = 1;
const TOMBSTONE = 2;

// No tag 64 on byte strings, no cbor-x record extension, definite-length maps: plain RFC 8949.
const encoder = new Encoder({ tagUint8Array: false, useRecords: false, variableMapSize: true });
const decoder = new Decoder({ useRecords: false, mapsAsObjects: false });

/** RFC 3339 in UTC with a `Z`, as `Date.prototype.toISOString` writes it (fractions optional). */
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

export function encodeHead(head: Head): Buffer {
  const digest = Buffer.from(head.digest, "hex");
  const value = head.kind === "entry" ? [ENTRY, digest] : [TOMBSTONE, digest, head.redactedAt, head.reason, head.size];
  return encoder.encode(value);
}

/** Why a reason text cannot be kept in a tombstone, or undefined when it can. */
export function reasonFault(reason: string): string | undefined {
  if (reason.length === 0) return "a redaction needs a reason";
  if (!reason.isWellFormed()) return "the reason is not well-formed Unicode (a lone surrogate)";
  const bytes = Buffer.byteLength(reason, "utf8");
  if (bytes > MAX_REASON_BYTES) return `the reason is ${bytes} bytes of UTF-8; at most ${MAX_REASON_BYTES} are kept`;
  return undefined;
}

function isRfc3339Utc(text: string): boolean {
  return RFC3339_UTC.test(text) && !Number.isNaN(Date.parse(text));
}

export function decodeHead(bytes: Uint8Array): HeadRead {
  // Every entry frame has this head: compare it with its one encoding, array(2), 1,
  // bytes(32), directly; that is what decoding and re-encoding would conclude, without a
  // round trip through cbor-x for each of a million frames.
  if (bytes.length === 36 && bytes[0] === 0x82 && bytes[1] === 0x01 && bytes[2] === 0x58 && bytes[3] === 0x20) {
    return { ok: true, head: { kind: "entry", digest: Buffer.from(bytes.buffer, bytes.byteOffset + 4, 32).toString("hex") } };
  }
  let value: unknown;
  try {
    value = decoder.decode(bytes);
  } catch (error) {
    return { ok: false, detail: `head is not CBOR: ${messageOf(error)}` };
  }
  const head = shapeOf(value);
  if (!head.ok) return head;
  // The exact-encoding rule: anything cbor-x accepted leniently re-encodes differently.
  if (!encodeHead(head.head).equals(bytes)) return { ok: false, detail: "head is not in its one encoding" };
  return head;
}

function shapeOf(value: unknown): HeadRead {
  if (!Array.isArray(value)) return { ok: false, detail: "head is not a CBOR array" };
  const [kind, digest, redactedAt, reason, size] = value as unknown[];
  if (!(digest instanceof Uint8Array) || digest.length !== 32) return { ok: false, detail: "head digest is not a 32-byte string" };
  const hex = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString("hex");
  if (kind === ENTRY) {
    if (value.length !== 2) return { ok: false, detail: `entry head has ${value.length} items, not 2` };
    return { ok: true, head: { kind: "entry", digest: hex } };
  }
  if (kind === TOMBSTONE) {
    if (value.length !== 5) return { ok: false, detail: `tombstone head has ${value.length} items, not 5` };
    if (typeof redactedAt !== "string" || !isRfc3339Utc(redactedAt)) return { ok: false, detail: "tombstone time is not RFC 3339 UTC" };
    if (typeof reason !== "string" || reasonFault(reason) !== undefined) return { ok: false, detail: "tombstone reason is not a kept text" };
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) return { ok: false, detail: "tombstone size is not an unsigned integer" };
    return { ok: true, head: { kind: "tombstone", digest: hex, redactedAt, reason, size } };
  }
  return { ok: false, detail: "head kind is neither 1 (entry) nor 2 (tombstone)" };
}
