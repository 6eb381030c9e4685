import { KeyId } from "../wire/digest.js";
import { verifyingKey } from "../crypto/ed25519.js";
import { signatureClaim, type SessionKey, type SignatureToCheck } from "../crypto/signing.js";
import { checkHex, fromCheckedHex } from "../wire/hex.js";
import { isJsonObject, type JsonObject } from "../wire/json.js";
import { lineTypeOf } from "../wire/line-types.js";
import { readRow } from "../wire/row-read.js";
import { RowSplitter } from "../wire/row-splitter.js";
import type { SigningInput } from "./signature-checker.js";
import {
  AnswerWriter,
  CHECK,
  DETAIL,
  KEY,
  KEYS_ID,
  KEY_ID_MEMBER,
  LINKED_MEMBERS,
  LINKS_BACK,
  MEMBERS,
  OTHER,
  PREV_HASH_MEMBER,
  ROW_DOES_NOT_PARSE,
  ROW_LINE,
  ROW_NOT_OBJECT,
  ROW_OUTSIDE_VALUE_SPACE,
  ROW_TOO_LONG,
  SIGNATURE_MEMBER,
  WELL_FORMED,
  type PieceAnswer,
} from "./piece-answer.js";

/**
 * The order-free half of the walk (SPEC §8.2 frees the order of the work, not of the
 * answer): a piece of a record, whole rows only, read off the walking thread. Each row is
 * split, parsed, canonicalized and hashed, and its signature checked against the key of the
 * Session it seems to be in; what comes back is what the walk needs to link the rows in
 * order, and no more (ADR 0027). One reader for `aegis verify`'s row threads and the report
 * page's workers (ADR 0028): only the curve check itself is theirs, now (Node) or later
 * (WebCrypto). No Node API here.
 */

/**
 * The curve check of one row's signature (SPEC §8.5 step 4) on the reading thread: every
 * other check of the signature is the claim's (`signatureClaim`). `input` is valid during the
 * call only.
 */
export type PieceCheck<Answer extends boolean | Promise<boolean>> = (claim: SignatureToCheck, input: SigningInput) => Answer;

// Decoding a key costs a square root (some 130 µs, 0.3 µs a Line of a 256 KiB piece): a
// piece asks for its Session's key once, and most records hold one key, so the last one
// decoded is kept.
let last: { readonly hex: string; readonly key: SessionKey } | undefined;

function sessionKeyOf(hex: string): SessionKey {
  // Stryker disable next-line ConditionalExpression: equivalent E26
  if (last?.hex === hex) return last.key;
  const bytes = fromCheckedHex(hex);
  last = { hex, key: { keyId: KeyId.of(bytes), key: verifyingKey(bytes) } };
  return last.key;
}

/** The slot of each linked member of `value` (piece-answer.ts). */
function writeMembers(out: AnswerWriter, at: number, value: JsonObject, before: string | undefined, keyId: string | undefined): void {
  // forEach, not entries(): an [index, name] pair per member of every row was 1% of a row
  // thread's CPU, the collector's share included (docs/benchmarks.md).
  LINKED_MEMBERS.forEach((name, i) => {
    if (!(name in value)) return;
    const member = value[name];
    let slot: number;
    if (typeof member === "number") slot = out.number(member);
    else if (typeof member !== "string") slot = OTHER;
    // Most rows link to the row before: the walking thread has that hash already.
    else if (i === PREV_HASH_MEMBER && member === before) slot = LINKS_BACK;
    // The walk only asks whether a signature is well formed; the check itself is made here.
    // Should the walking thread have to check it again, it reads the row again (piece-rows.ts).
    else if (i === SIGNATURE_MEMBER && checkHex(member, 128) === undefined) slot = WELL_FORMED;
    else if (i === KEY_ID_MEMBER && member === keyId) slot = KEYS_ID;
    else slot = out.string(member);
    out.set(at, MEMBERS + i, slot);
  });
}

/** A check that answers later: where its row's numbers start, and its answer. */
interface Later {
  readonly at: number;
  readonly passed: Promise<boolean>;
}

/**
 * Read the rows of `piece` (whole rows, as RowSplitter splits them, the last one perhaps
 * without its `\n`), `budget` of them at most: the answer says where the rest starts
 * (`readTo`). `hint` is the public key of the last `open` before the piece, as the reader
 * guessed it; a wrong guess costs the walking thread a check, never the answer. Without
 * `check`, no signature is checked here: the walk's checker makes the checks it asks for.
 */
export function readPiece(piece: Uint8Array, limit: number, hint: string | undefined, budget: number, check?: PieceCheck<boolean>): PieceAnswer {
  return readRows(piece, limit, hint, budget, check, undefined);
}

/**
 * {@link readPiece} with checks that may answer later (WebCrypto's): every row is read before
 * this returns, and the answer is given once every check has answered.
 */
export function readPieceLater(
  piece: Uint8Array,
  limit: number,
  hint: string | undefined,
  budget: number,
  check: PieceCheck<boolean | Promise<boolean>>,
): Promise<PieceAnswer> {
  const later: Later[] = [];
  const answer = readRows(piece, limit, hint, budget, check, later);
  if (later.length === 0) return Promise.resolve(answer);
  return Promise.all(later.map(({ at, passed }) => passed.then((ok) => void (answer.rows[at + CHECK] = ok ? 1 : 0)))).then(() => answer);
}

function readRows(
  piece: Uint8Array,
  limit: number,
  hint: string | undefined,
  budget: number,
  check: PieceCheck<boolean | Promise<boolean>> | undefined,
  later: Later[] | undefined,
): PieceAnswer {
  const splitter = new RowSplitter(limit);
  const out = new AnswerWriter();
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
  let before: string | undefined;
  let count = 0;
  let readTo = piece.length;
  // At least a row, so that every answer reads on.
  const most = Math.max(1, budget);
  // One row at a time: a piece of many small rows held as row objects at once is what a
  // thread's heap would run out on.
  for (const row of chain(splitter.push(piece), splitter.end())) {
    // The budget: an answer is some 130 bytes a row whatever the row's size, so a piece of
    // rows of two bytes would answer 60 times its size (ADR 0027, point 7). A row starts
    // after a `\n`: the rest, split from there, is these same rows.
    if (count === most) {
      readTo = row.offset;
      break;
    }
    count++;
    const last = before;
    before = undefined;
    if (row.code === "too_long") {
      out.set(out.row(ROW_TOO_LONG, row.offset, row.length, undefined), KEY, key);
      continue;
    }
    const start = row.offset;
    const end = row.offset + row.bytes.length;
    const read = readRow(row.bytes);
    if (!read.ok) {
      const at = out.row(read.fault === "does_not_parse" ? ROW_DOES_NOT_PARSE : ROW_OUTSIDE_VALUE_SPACE, start, end, undefined);
      out.set(at, DETAIL, out.string(read.detail) >> 1);
      continue;
    }
    const value = read.value;
    if (!isJsonObject(value)) {
      out.row(ROW_NOT_OBJECT, start, end, read.lineHash);
      continue;
    }
    const type = typeof value["line_type"] === "string" ? lineTypeOf(String(value["line_type"])).token : undefined;
    const publicKey = value["public_key"];
    // An `open` is signed under its own key (walk.ts, step 5.7 before step 6).
    if (type === "open" && typeof publicKey === "string" && checkHex(publicKey, 64) === undefined) use(publicKey);
    const at = out.row(ROW_LINE, start, end, read.lineHash);
    out.set(at, KEY, key);
    // An intent is never signed: the walk checks no signature on it.
    if (check !== undefined && session !== undefined && type !== "intent") {
      const claim = signatureClaim(value, session);
      if (claim.code === "check") {
        const passed = check(claim, { text: read.signingInput, row: row.bytes, cut: read.signingCut });
        if (typeof passed === "boolean") out.set(at, CHECK, passed ? 1 : 0);
        else later?.push({ at, passed });
      }
    }
    writeMembers(out, at, value, last, session?.keyId);
    before = read.lineHash;
  }
  return out.finish(keys, readTo, keys[key]);
}

function* chain<T>(first: Iterable<T>, second: Iterable<T>): Generator<T> {
  yield* first;
  yield* second;
}
