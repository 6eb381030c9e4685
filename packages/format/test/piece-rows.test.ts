import { describe, expect, it } from "vitest";
import { KeyId } from "../src/wire/digest.js";
import { SigningKey } from "../src/crypto/keys.js";
import { readRow } from "../src/wire/row-read.js";
import { RowSplitter, type Row } from "../src/wire/row-splitter.js";
import { isJsonObject, type JsonValue } from "../src/wire/json.js";
import {
  AnswerWriter,
  CHECK,
  DETAIL,
  KEY,
  KEYS_ID,
  KIND,
  LINKED_MEMBERS,
  LINKS_BACK,
  MEMBERS,
  ROW_DOES_NOT_PARSE,
  ROW_LINE,
  ROW_NOT_OBJECT,
  ROW_OUTSIDE_VALUE_SPACE,
  ROW_TOO_LONG,
  STRIDE,
  WELL_FORMED,
  type PieceAnswer,
} from "../src/verify/piece-answer.js";
import { PieceRows } from "../src/verify/piece-rows.js";
import { readPiece, readPieceLater, type PieceCheck } from "../src/verify/row-work.js";
import { checkNow } from "../src/verify/signature-checker.js";
import { verifyingKey } from "../src/crypto/ed25519.js";
import { DEV, outcome, reseal, type Line } from "./support/chains.js";
import { RequestDigest } from "../src/index.js";

/**
 * A piece as its reader answers it (row-work.ts) and as the walking thread reads the answer
 * back (piece-rows.ts): each row's kind, the Session key it was checked under and the check's
 * result, the members the walk reads (some as stand-ins: a well-formed signature, the link to
 * the row before, the Session's key id), and a corrupt answer refused rather than read.
 */
const OTHER_KEY = SigningKey.fromSeed(new Uint8Array(32).fill(3));
const LIMIT = 2048;

const intent = (id: string, extra: Line = {}): Line => ({
  schema_version: 2,
  line_type: "intent",
  prev_hash: "",
  call_id: id,
  tool_id: "fs.read",
  request_digest: RequestDigest.of(Buffer.from(id)),
  ...extra,
});
const done = (id: string): Line => ({ schema_version: 2, line_type: "outcome", prev_hash: "", ...outcome(id) });
const header = (type: string): Line => ({ schema_version: 2, line_type: type, prev_hash: "" });

/**
 * Two Sessions, the second under another key, then rows the walk would stop at:
 * 0 open, 1 intent, 2 outcome, 3 intent carrying a signature, 4 close, 5 open (other key),
 * 6 outcome with a bad signature, 7 outcome, 8 `1`, 9 `{x`, 10 `{"a":1.5}`, 11 a row over the bound.
 */
function piece(): { text: string; rows: string[] } {
  const first = [header("open"), intent("c1"), done("c1"), intent("c2", { signature: "" }), header("close")];
  const second = [header("open"), done("c3"), done("c4")];
  const lines = [...first, ...second].map((l, i) => ({ ...l, seq: i < first.length ? i : i - first.length }));
  const sealed = reseal(lines, { signWith: new Map([5, 6, 7].map((i) => [i, OTHER_KEY])) })
    .trimEnd()
    .split("\n");
  const bad = (row: string): string => row.replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === "0" ? "1" : "0"}`);
  const rows = [...sealed.map((r, i) => (i === 6 ? bad(r) : r)), "1", "{x", '{"a":1.5}', `{"pad":"${"x".repeat(LIMIT)}"}`];
  return { text: `${rows.join("\n")}\n`, rows };
}

const slot = (answer: PieceAnswer, row: number, field: number): number => answer.rows[STRIDE * row + field] ?? NaN;
const member = (answer: PieceAnswer, row: number, name: (typeof LINKED_MEMBERS)[number]): number => slot(answer, row, MEMBERS + LINKED_MEMBERS.indexOf(name));

function counting(): { check: PieceCheck<boolean>; made: () => number } {
  let made = 0;
  return {
    check: (claim, input) => {
      made++;
      return checkNow(claim, input);
    },
    made: () => made,
  };
}

describe("a piece as its reader answers it", () => {
  const { text, rows } = piece();
  const bytes = Buffer.from(text);

  it("says each row's kind, Session key and check, the signed Lines checked and only those", () => {
    const { check, made } = counting();
    const answer = readPiece(bytes, LIMIT, undefined, 1000, check);
    expect(answer.rows).toHaveLength(12 * STRIDE);
    expect(Array.from({ length: 12 }, (_, i) => slot(answer, i, KIND))).toEqual([
      ...Array<number>(8).fill(ROW_LINE),
      ROW_NOT_OBJECT,
      ROW_DOES_NOT_PARSE,
      ROW_OUTSIDE_VALUE_SPACE,
      ROW_TOO_LONG,
    ]);
    expect(answer.keys).toEqual([DEV.publicKeyHex, OTHER_KEY.publicKeyHex]);
    expect(Array.from({ length: 12 }, (_, i) => slot(answer, i, KEY))).toEqual([0, 0, 0, 0, 0, 1, 1, 1, -1, -1, -1, 1]);
    // The intent's signature is never checked (an intent is not signed): -1, as for the rows that are not Lines.
    expect(Array.from({ length: 12 }, (_, i) => slot(answer, i, CHECK))).toEqual([1, -1, 1, -1, 1, 1, 0, 1, -1, -1, -1, -1]);
    expect(made()).toBe(6);
    expect([answer.readTo, answer.hintAt]).toEqual([bytes.length, OTHER_KEY.publicKeyHex]);
    expect(answer.strings[slot(answer, 9, DETAIL)]).toBe(
      readRow(Buffer.from(rows[9] ?? "")).ok ? "?" : (readRow(Buffer.from(rows[9] ?? "")) as { detail: string }).detail,
    );
    expect([slot(answer, 11, 1), slot(answer, 11, 2)]).toEqual([bytes.indexOf(`{"pad"`), (rows[11] ?? "").length]);
  });

  it("sends a well-formed signature, the link to the row before and the Session's key id as stand-ins, not as strings", () => {
    const answer = readPiece(bytes, LIMIT, undefined, 1000, checkNow);
    expect(member(answer, 2, "signature")).toBe(WELL_FORMED);
    expect(member(answer, 2, "key_id")).toBe(KEYS_ID);
    expect(member(answer, 2, "prev_hash")).toBe(LINKS_BACK);
    expect(member(answer, 1, "approval_id")).toBe(-1);
    // The intent's signature too, though it is not checked.
    expect(member(answer, 3, "signature")).toBe(WELL_FORMED);
    const strings = new Set(answer.strings);
    for (const sent of [DEV.publicKeyHex, OTHER_KEY.publicKeyHex]) expect(strings.has(sent)).toBe(true);
    expect([...strings].some((s) => s.length === 128)).toBe(false);
    expect(strings.has(KeyId.of(DEV.publicKey))).toBe(false);
  });

  it("checks under the hint from the piece's first row, when the hint is a key; without one, nothing is checked", () => {
    const rest = Buffer.from(rows.slice(1, 5).join("\n"));
    const hinted = counting();
    const answer = readPiece(rest, LIMIT, DEV.publicKeyHex, 1000, hinted.check);
    expect([answer.keys, hinted.made(), answer.hintAt]).toEqual([[DEV.publicKeyHex], 2, DEV.publicKeyHex]);
    expect(Array.from({ length: 4 }, (_, i) => slot(answer, i, CHECK))).toEqual([-1, 1, -1, 1]);
    for (const hint of [undefined, "zz".repeat(32), DEV.publicKeyHex.slice(2)]) {
      const none = counting();
      const unhinted = readPiece(rest, LIMIT, hint, 1000, none.check);
      expect([unhinted.keys, none.made(), unhinted.hintAt], String(hint)).toEqual([[], 0, undefined]);
      expect(Array.from({ length: 4 }, (_, i) => slot(unhinted, i, KEY))).toEqual([-1, -1, -1, -1]);
    }
  });

  it("reads `budget` rows at most, at least one, and says where the rest starts and under which key", () => {
    for (const budget of [0, 1, 6, 12]) {
      const answer = readPiece(bytes, LIMIT, undefined, budget, checkNow);
      const read = Math.max(1, budget);
      expect(answer.rows.length / STRIDE).toBe(read);
      expect(answer.readTo).toBe(read === 12 ? bytes.length : bytes.indexOf(`${rows[read] ?? ""}\n`));
      expect(answer.hintAt).toBe(read > 5 ? OTHER_KEY.publicKeyHex : DEV.publicKeyHex);
    }
  });

  it("answers the same when its checks answer later, as WebCrypto's do", async () => {
    const now = readPiece(bytes, LIMIT, undefined, 1000, checkNow);
    let n = 0;
    const later = await readPieceLater(bytes, LIMIT, undefined, 1000, (claim, input) => {
      const passed = checkNow(claim, input);
      return n++ % 2 === 0 ? passed : Promise.resolve(passed);
    });
    expect(later).toEqual(now);
    expect(await readPieceLater(bytes, LIMIT, undefined, 1000, (claim, input) => checkNow(claim, input))).toEqual(now);
  });
});

describe("a piece's answer, read back on the walking thread", () => {
  const { text, rows } = piece();
  const bytes = Buffer.from(text);
  const splitter = new RowSplitter(LIMIT);
  const split: Row[] = [...splitter.push(bytes), ...splitter.end()];

  it("gives each row as RowSplitter would, at its offset, and what the walk reads of its value", () => {
    const answer = readPiece(bytes, LIMIT, undefined, 1000, checkNow);
    const reading = new PieceRows();
    expect(reading.length).toBe(0);
    reading.begin(answer, bytes);
    expect(reading.length).toBe(12);
    for (let i = 0; i < 12; i++) {
      const row = reading.row(i, 100 + i, 5000, LIMIT);
      const want = split[i];
      if (want === undefined) throw new Error("RowSplitter split twelve rows");
      expect(row).toEqual({ ...want, number: 100 + i, offset: want.offset + 5000 });
      const read = reading.read;
      if (want.code === "too_long") {
        expect(read).toBeUndefined();
        continue;
      }
      const full = readRow(want.bytes);
      if (!full.ok) {
        expect(read).toEqual({ ok: false, fault: full.fault, detail: full.detail });
        continue;
      }
      if (read?.ok !== true) throw new Error(`row ${i} was read`);
      expect(read.lineHash).toBe(full.lineHash);
      expect(Buffer.from(read.canonical()).toString()).toBe(Buffer.from(full.canonical()).toString());
      expect(read.signingInput()).toBe(full.signingInput());
      if (!isJsonObject(full.value)) {
        expect(read.value).toBeNull();
        continue;
      }
      const expected: Record<string, JsonValue> = {};
      for (const name of LINKED_MEMBERS) {
        const value = full.value[name];
        if (value === undefined) continue;
        // A well-formed signature's stand-in: the check was made by the reader.
        expect(value).not.toBeNull();
        expected[name] = name === "signature" && typeof value === "string" && value.length === 128 ? "0".repeat(128) : value;
      }
      expect(read.value, `row ${i}`).toEqual(expected);
    }
    reading.end();
    expect(reading.length).toBe(0);
    expect(() => reading.row(0, 1, 0, LIMIT)).toThrow("no row 0 in a piece of 0");
  });

  it("gives the reader's check when made under the Session's key, and checks here otherwise", () => {
    const answer = readPiece(bytes, LIMIT, undefined, 1000, checkNow);
    const reading = new PieceRows();
    reading.begin(answer, bytes);
    const dev = verifyingKey(DEV.publicKey);
    const other = verifyingKey(OTHER_KEY.publicKey);
    if (typeof dev === "string" || typeof other === "string") throw new Error("the keys are points");
    const checkOf = (i: number, key: typeof dev): boolean => {
      reading.row(i, i + 1, 0, LIMIT);
      const full = readRow(Buffer.from(rows[i] ?? ""));
      if (!full.ok || !isJsonObject(full.value)) throw new Error("a Line");
      const signature = full.value["signature"];
      if (typeof signature !== "string") throw new Error(`row ${i} is signed`);
      return reading.check({ code: "check", key, signature }, { text: full.signingInput, row: undefined, cut: undefined });
    };
    expect([checkOf(2, dev), checkOf(6, other), checkOf(7, other), reading.madeHere]).toEqual([true, false, true, 0]);
    // Under a key the reader did not check with: checked here, on the row's own signature.
    expect([checkOf(2, other), checkOf(7, dev), reading.madeHere]).toEqual([false, false, 2]);
  });

  it("refuses an answer that names a slot, a key or a row it cannot hold", () => {
    const corrupt = (edit: (out: AnswerWriter, at: number) => void, row = rows[2] ?? ""): PieceRows => {
      const out = new AnswerWriter();
      const at = out.row(ROW_LINE, 0, row.length, "0".repeat(64));
      out.set(at, KEY, 0);
      edit(out, at);
      const reading = new PieceRows();
      reading.begin(out.finish([DEV.publicKeyHex], row.length, undefined), Buffer.from(row));
      return reading;
    };
    expect(() => corrupt((out, at) => out.set(at, MEMBERS, -9)).row(0, 1, 0, LIMIT)).toThrow("a row thread answered a member slot -9");
    expect(() => corrupt((out, at) => (out.set(at, MEMBERS + 8, KEYS_ID), out.set(at, KEY, 5))).row(0, 1, 0, LIMIT)).toThrow(
      "a row thread answered key 5 of 1",
    );
    expect(() => corrupt((out, at) => out.set(at, MEMBERS, 2 * 7)).row(0, 1, 0, LIMIT)).toThrow("a row thread answered string 7 of 0");
    expect(() => corrupt((out, at) => out.set(at, MEMBERS + 1, 2 * 3 + 1)).row(0, 1, 0, LIMIT)).toThrow("a row thread answered number 3 of 0");
    expect(() => corrupt(() => undefined).row(1, 2, 0, LIMIT)).toThrow("no row 1 in a piece of 1");
    const unreadable = corrupt(() => undefined, "{x");
    unreadable.row(0, 1, 0, LIMIT);
    expect(() => (unreadable.read?.ok === true ? unreadable.read.signingInput() : "")).toThrow("a row a worker read does not read again");
  });
});
