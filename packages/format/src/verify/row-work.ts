import { KeyId } from "../wire/digest.js";
import { verifyingKey } from "../crypto/ed25519.js";
import { signatureClaim, type SessionKey } from "../crypto/signing.js";
import { checkHex, fromCheckedHex } from "../wire/hex.js";
import { isJsonObject, type JsonObject } from "../wire/json.js";
import { lineTypeOf } from "../wire/line-types.js";
import { readRow } from "../wire/row-read.js";
import { RowSplitter } from "../wire/row-splitter.js";
import { checkNow } from "./signature-checker.js";

/**
 * The order-free half of the walk (SPEC §8.2 frees the order of the work, not of the
 * answer): a piece of a record, whole rows only, read on a worker thread. Each row is split,
 * parsed, canonicalized and hashed, and its signature checked against the key of the
 * Session it seems to be in; what comes back is what the calling thread's walk needs to
 * link the rows in order, and no more (ADR 0027).
 */

/** The members of a Line the walk reads (walk.ts, signatureClaim); the rest stay on the worker. */
export const LINKED_MEMBERS = ["line_type", "seq", "prev_hash", "prev_session_tail", "public_key", "call_id", "approval_id", "signature", "key_id"] as const;

/** One row of a piece, read. */
export type RowItem =
  /** Parsed, with a canonical form: `v` its linked members (null when it is not an object), `h` its line hash. */
  | {
      readonly v: JsonObject | null;
      readonly h: string;
      /** The signature's curve check under key `k` of the piece: 1 passed, 0 failed, -1 not made. */
      readonly s: 1 | 0 | -1;
      readonly k: number;
      /** 1 when `prev_hash` is the line hash of the row before it in the piece, and left out of `v`. */
      readonly p?: 1;
    }
  /** No Line: why (row-read.ts). */
  | { readonly f: "does_not_parse" | "outside_value_space"; readonly d: string }
  /** Over the row bound (SPEC §13.1). */
  | { readonly t: number };

/** A piece's rows, in order. `at` holds each row's [start, end) in the piece, two numbers a row. */
export interface PieceAnswer {
  readonly items: readonly RowItem[];
  readonly at: Uint32Array;
  /** The public keys (hex) the signature checks were made under, indexed by `k`. */
  readonly keys: readonly string[];
}

// A file may open many Sessions under as many keys; decoding one costs a square root.
const MAX_KEYS = 1024;
const sessionKeys = new Map<string, SessionKey>();

function sessionKeyOf(hex: string): SessionKey {
  let key = sessionKeys.get(hex);
  if (key === undefined) {
    if (sessionKeys.size >= MAX_KEYS) sessionKeys.clear();
    const bytes = fromCheckedHex(hex);
    key = { keyId: KeyId.of(bytes), key: verifyingKey(bytes) };
    sessionKeys.set(hex, key);
  }
  return key;
}

/**
 * A signature the walk will find well formed (SPEC §4: 128 lowercase hex) travels as this:
 * the walk only asks whether it is, and the check itself was made here. Should the calling
 * thread have to check it again, it reads the row again (split-walk.ts).
 */
export const WELL_FORMED_SIGNATURE = "0".repeat(128);

function linked(value: JsonObject, linksBack: boolean): JsonObject {
  const kept: Record<string, string | number | null> = {};
  for (const name of LINKED_MEMBERS) {
    if (!(name in value) || (linksBack && name === "prev_hash")) continue;
    const member = value[name];
    // The walk asks of each only whether it is a string or a number (or present at all).
    kept[name] = typeof member === "string" || typeof member === "number" ? member : null;
  }
  const signature = kept["signature"];
  if (typeof signature === "string" && checkHex(signature, 128) === undefined) kept["signature"] = WELL_FORMED_SIGNATURE;
  return kept;
}

/**
 * Read the rows of `piece` (whole rows, as RowSplitter splits them, the last one perhaps
 * without its `\n`). `hint` is the public key of the last `open` before the piece, as
 * the reader guessed it; a wrong guess costs the calling thread a check, never the answer.
 */
export function readPiece(piece: Buffer, limit: number, hint: string | undefined): PieceAnswer {
  const splitter = new RowSplitter(limit);
  const items: RowItem[] = [];
  const at: number[] = [];
  const keys: string[] = [];
  let key = -1;
  let session: SessionKey | undefined;
  const use = (hex: string): void => {
    if (keys[key] === hex) return;
    session = sessionKeyOf(hex);
    key = keys.length;
    keys.push(hex);
  };
  if (hint !== undefined && checkHex(hint, 64) === undefined) use(hint);
  const rows = [...splitter.push(piece), ...splitter.end()];
  let before: string | undefined;
  for (const row of rows) {
    const last = before;
    before = undefined;
    if (row.code === "too_long") {
      at.push(row.offset, row.offset);
      items.push({ t: row.length });
      continue;
    }
    at.push(row.offset, row.offset + row.bytes.length);
    const read = readRow(row.bytes);
    if (!read.ok) {
      items.push({ f: read.fault, d: read.detail });
      continue;
    }
    const value = read.value;
    if (!isJsonObject(value)) {
      items.push({ v: null, h: read.lineHash, s: -1, k: -1 });
      continue;
    }
    const type = typeof value["line_type"] === "string" ? lineTypeOf(String(value["line_type"])).token : undefined;
    const publicKey = value["public_key"];
    // An `open` is signed under its own key (walk.ts, step 5.7 before step 6).
    if (type === "open" && typeof publicKey === "string" && checkHex(publicKey, 64) === undefined) use(publicKey);
    let checked: 1 | 0 | -1 = -1;
    // An intent is never signed: the walk checks no signature on it.
    if (session !== undefined && type !== "intent") {
      const claim = signatureClaim(value, session);
      if (claim.code === "check") checked = checkNow(claim, { text: read.signingInput, row: row.bytes, cut: read.signingCut }) ? 1 : 0;
    }
    // Most rows link to the row before: the calling thread has that hash already.
    const linksBack = last !== undefined && value["prev_hash"] === last;
    items.push({ v: linked(value, linksBack), h: read.lineHash, s: checked, k: checked === -1 ? -1 : key, ...(linksBack ? { p: 1 as const } : {}) });
    before = read.lineHash;
  }
  return { items, at: Uint32Array.from(at), keys };
}
