import { describe, expect, it } from "vitest";
import { readRow, verifyingKey } from "../src/internal.js";
import type { SignatureToCheck } from "../src/crypto/signing.js";
import { checkNow, type SigningInput } from "../src/verify/signature-checker.js";
import { DEV, reseal } from "./support/chains.js";

/**
 * The seam between the walk and the curve arithmetic (signature-checker.ts). A Line's signing
 * input (SPEC §4) is, for a canonical ASCII row (every row a writer writes), the row's own bytes
 * less the signature member, copied without a string built per Line (row-read.ts's
 * `signingCut`); for any other row it is the text joined from its members. No verdict shows
 * which was read, since both are the same bytes: these pin that the row is read when it is the
 * input, and the text otherwise, and that either way the signature is judged on the input.
 */
interface Read {
  readonly claim: SignatureToCheck;
  readonly bytes: Buffer;
  readonly text: () => string;
  readonly cut: { readonly start: number; readonly end: number } | undefined;
}

/**
 * Row `index` of a signed Session (0: an open, ASCII; 1: a close holding "été"), read as the
 * walk reads it. Made in each test rather than as the file loads, so the mutation run counts
 * what it reaches against these tests (ADR 0026).
 */
function read(index: number): Read {
  const key = verifyingKey(DEV.publicKey);
  if (typeof key === "string") throw new Error(`the dev key does not decode: ${key}`);
  const rows = reseal([
    { schema_version: 2, line_type: "open", seq: 0 },
    { schema_version: 2, line_type: "close", seq: 1, note: "été" },
  ]).split("\n");
  const bytes = Buffer.from(rows[index] ?? "", "utf8");
  const row = readRow(bytes);
  if (!row.ok) throw new Error(row.detail);
  const signature = (row.value as { signature?: unknown }).signature;
  if (typeof signature !== "string") throw new Error("the row is not signed");
  return { claim: { code: "check", key, signature }, bytes, text: row.signingInput, cut: row.signingCut };
}

const notJoined = (): string => {
  throw new Error("the text was joined although the row is the signing input");
};

describe("the signing input a signature check reads (SPEC §4)", () => {
  it("a canonical ASCII row: its bytes less the cut, the text never joined", () => {
    const row = read(0);
    expect(row.cut).toBeDefined();
    const claim = row.claim;
    expect(checkNow(claim, { text: notJoined, row: row.bytes, cut: row.cut })).toBe(true);
    // A byte of the row outside the cut is a byte of the signed message.
    const altered = Buffer.from(row.bytes);
    altered[altered.indexOf("open")] = "O".charCodeAt(0);
    expect(checkNow(claim, { text: row.text, row: altered, cut: row.cut })).toBe(false);
  });

  it("a row that is not its signing input as bytes (here, not ASCII): the text", () => {
    const row = read(1);
    expect(row.cut).toBeUndefined();
    const claim = row.claim;
    const input: SigningInput = { text: row.text, row: row.bytes, cut: undefined };
    expect(checkNow(claim, input)).toBe(true);
    expect(checkNow(claim, { ...input, text: () => row.text().replace("été", "ete") })).toBe(false);
  });

  it("a cut with no row to cut it from: the text", () => {
    const row = read(0);
    const claim = row.claim;
    expect(checkNow(claim, { text: row.text, row: undefined, cut: row.cut })).toBe(true);
  });
});
