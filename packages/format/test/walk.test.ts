import { afterAll, describe, expect, it } from "vitest";
import { LineHash, PrevHash, SigningKey, describeVerdict, type Verification } from "../src/index.js";
import { canonicalize } from "../src/internal.js";
import { ChainWalk } from "../src/verify/walk.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";
import { verifyChainBytesParallel } from "./support/tuned.js";
import { sharedPool } from "../src/verify/signature-pool.js";
import { DEV, reseal, type Line } from "./support/chains.js";

/**
 * The steps of the walk (SPEC §8.2) at the edges no vector stands on: each check that
 * mutation testing (ADR 0026) showed could be removed without a test noticing. Every case
 * asserts what a user reads: the verdict line `aegis verify` prints, the reason's code and
 * fields, and the coverage.
 */
const OTHER = SigningKey.fromSeed(new Uint8Array(32).fill(7));
const GENESIS = PrevHash.GENESIS as string;

const open = (): Line => ({ schema_version: 2, line_type: "open", seq: 0 });
const intent = (seq: number, callId: string): Line => ({ schema_version: 2, line_type: "intent", seq, call_id: callId, tool_id: "fs.read" });
const outcome = (seq: number, callId: string, extra: Line = {}): Line => ({ schema_version: 2, line_type: "outcome", seq, call_id: callId, ...extra });
const decision = (seq: number, approvalId: string): Line => ({
  schema_version: 2,
  line_type: "decision",
  seq,
  approval_id: approvalId,
  verdict: { verdict: "denied", reason: "no" },
});
const close = (seq: number): Line => ({ schema_version: 2, line_type: "close", seq });

/**
 * Lines chained and signed as an emitter would, each signed type under the key given for
 * it, except a Line that already carries a `signature`: it is written as it is.
 */
function chained(lines: readonly Line[], keys: readonly SigningKey[]): string {
  let tail: string | undefined;
  let out = "";
  for (const [i, original] of lines.entries()) {
    const key = keys[i] ?? DEV;
    const line: Line = { ...original };
    if (line["line_type"] === "open") {
      line["prev_hash"] = GENESIS;
      line["public_key"] = key.publicKeyHex;
      if (tail !== undefined) line["prev_session_tail"] = tail;
    } else {
      line["prev_hash"] = tail;
    }
    if (line["line_type"] !== "intent" && !("signature" in line)) {
      line["key_id"] = key.keyId;
      line["signature"] = Buffer.from(key.sign(Buffer.from(canonicalize(line, "signature")))).toString("hex");
    }
    const text = canonicalize(line);
    out += `${text}\n`;
    tail = LineHash.of(text);
  }
  return out;
}

function rowsOf(text: string): string[] {
  return text.split("\n").filter((r) => r.length > 0);
}

function file(rows: readonly string[]): string {
  return rows.map((r) => `${r}\n`).join("");
}

function reasonOf(v: Verification): Record<string, unknown> {
  return v.verdict.status === "verified" ? { status: "verified" } : { status: v.verdict.status, ...v.verdict.reason };
}

describe("steps 1-2: a row is read, canonicalized and hashed (SPEC §3, ADR 0003)", () => {
  const session = [open(), intent(1, "c"), outcome(2, "c"), decision(3, "apr-1"), close(4)];

  it("signed rows written with other spacing and member order verify, and hash as their canonical form", () => {
    const canonical = reseal(session);
    const respaced = rowsOf(canonical).map((row) => {
      const members = Object.entries(JSON.parse(row) as Line).reverse();
      return `{ ${members.map(([k, v]) => `${JSON.stringify(k)} : ${JSON.stringify(v)}`).join(" ,\t")} }`;
    });
    expect(respaced.join("\n")).not.toContain(rowsOf(canonical)[2]);
    const v = verifyChainBytes(file(respaced));
    const want = verifyChainBytes(canonical);
    expect(describeVerdict(v)).toBe("Verified (unpinned)");
    expect(v).toEqual(want);
  });

  it("signed Lines of 100 KB to 1 MB verify, in ASCII and not (the verifier's buffers grow to hold them)", () => {
    const big = (note: string): string => reseal([open(), { ...outcome(1, "c"), note }, close(2)]);
    // Each of the first two more than twice the largest before it (the buffers start at
    // 64 KiB): an ASCII row, checked from its own bytes, then one that is not, checked
    // from its text; then the others.
    const notes = ["b".repeat(300_000), "ü".repeat(500_000), "a".repeat(100_000), "é".repeat(100_000), "é".repeat(300_000), "c".repeat(900_000)];
    for (const note of notes) {
      const v = verifyChainBytes(big(note));
      expect(describeVerdict(v), `${note.length} × ${note[0] ?? ""}`).toBe("Verified (unpinned)");
      expect(v.coverage).toEqual({ session_index: 0, seq: 2 });
    }
  });

  it("an otherwise canonical row with an integer outside the value space is Tampered, with the reference's text", () => {
    const cases: [string, string][] = [
      ["18446744073709551616", "floating-point value at $.n is outside the JCS value space"],
      ["18446744073709551615", "integer 18446744073709551615 at $.n is at or above 2^53 (max 9007199254740991)"],
      ["9007199254740992", "integer 9007199254740992 at $.n is at or above 2^53 (max 9007199254740991)"],
      ["-1", "negative integer at $.n is outside the JCS value space"],
      ["1.0", "floating-point value at $.n is outside the JCS value space"],
    ];
    for (const [number, fault] of cases) {
      const rows = rowsOf(reseal(session));
      // "n" sorts between "line_type" and "prev_hash": the row stays in canonical member order.
      rows[1] = (rows[1] ?? "").replace('"prev_hash"', `"n":${number},"prev_hash"`);
      const v = verifyChainBytes(file(rows));
      expect(reasonOf(v), number).toEqual({
        status: "tampered",
        code: "malformed_line",
        line: 2,
        detail: `outside the canonical value space, so it has no reproducible hash: ${fault}`,
      });
      expect(describeVerdict(v)).toBe(`Tampered: line 2: outside the canonical value space, so it has no reproducible hash: ${fault}`);
    }
  });

  it("a row that is not JSON before the last is Tampered with the reader's message; as the last, a torn write", () => {
    const rows = rowsOf(reseal(session));
    const cut = (rows[2] ?? "").slice(0, 40);
    const middle = verifyChainBytes(file([...rows.slice(0, 2), cut, ...rows.slice(3)]));
    expect(describeVerdict(middle)).toBe("Tampered: line 3: not JSON: EOF while parsing a string at line 1 column 40");
    const last = verifyChainBytes(file([...rows.slice(0, 2), cut]));
    expect(describeVerdict(last)).toBe("Indeterminate: final line 3 does not parse; torn write");
    expect(last.lines).toBe(3);
  });
});

describe("step 3 and the result's members", () => {
  it("a Line with no prev_hash member is malformed: no prev_hash", () => {
    const rows = rowsOf(reseal([open(), intent(1, "c"), close(2)]));
    const withoutPrev = JSON.parse(rows[1] ?? "") as Line;
    delete withoutPrev["prev_hash"];
    rows[1] = canonicalize(withoutPrev);
    expect(describeVerdict(verifyChainBytes(file(rows)))).toBe("Tampered: line 2: no prev_hash");
  });

  it("coverage and head are absent, not undefined, when there are none", () => {
    expect(Object.keys(verifyChainBytes("")).sort()).toEqual(["key_ids", "lines", "sessions", "trust", "unfinished_calls", "verdict"]);
    const refused = verifyChainBytes(reseal([open(), close(1)]), { trust: [] });
    expect(Object.keys(refused).sort()).toEqual(["key_ids", "lines", "sessions", "trust", "unfinished_calls", "verdict"]);
  });

  it("a Tampered file counts no unfinished call of a Session it closed before the break", () => {
    const rows = rowsOf(reseal([open(), intent(1, "waits"), close(2)]));
    const v = verifyChainBytes(file([...rows, "not json", "{}"]));
    expect(describeVerdict(v)).toBe("Tampered: line 4: not JSON: expected ident at line 1 column 2");
    expect(v.unfinished_calls).toEqual({ count: 0, calls: [] });
    const closed = verifyChainBytes(file(rows));
    expect(closed.unfinished_calls).toEqual({ count: 1, calls: [{ call_id: "waits", session_index: 0 }] });
  });

  it("the walk is done at its first Tampered row, and not before", () => {
    const rows = rowsOf(reseal([open(), intent(1, "c"), close(2)]));
    const walk = new ChainWalk();
    let offset = 0;
    const done: boolean[] = [];
    for (const [i, text] of [rows[0], rows[1], "[]", rows[2]].entries()) {
      const bytes = Buffer.from(text ?? "");
      walk.step({ code: "row", number: i + 1, offset, bytes });
      offset += bytes.length + 1;
      done.push(walk.done);
    }
    expect(done).toEqual([false, false, true, true]);
    expect(describeVerdict(walk.finish())).toBe("Tampered: line 3: no line_type");
  });
});

describe("step 6: a decision requires its signature", () => {
  const session = [open(), intent(1, "c"), outcome(2, "c"), decision(3, "apr-1"), close(4)];

  it("a decision with no signature is Tampered there", () => {
    const v = verifyChainBytes(reseal(session, { unsigned: [3] }));
    expect(reasonOf(v)).toEqual({ status: "tampered", code: "bad_signature", at: { session_index: 0, seq: 3 }, source: { code: "unsigned" } });
    expect(describeVerdict(v)).toBe("Tampered: line at session 0 seq 3: line carries no signature");
    expect(v.coverage).toEqual({ session_index: 0, seq: 2 });
  });

  it("a decision whose signature does not match it is Tampered there", () => {
    const rows = rowsOf(reseal(session));
    rows[3] = (rows[3] ?? "").replace('"reason":"no"', '"reason":"ok"');
    const v = verifyChainBytes(file(rows));
    expect(reasonOf(v)).toEqual({ status: "tampered", code: "bad_signature", at: { session_index: 0, seq: 3 }, source: { code: "bad_signature" } });
    expect(describeVerdict(v)).toBe("Tampered: line at session 0 seq 3: signature does not match this line");
  });

  it("an outcome that carries an approval_id decides nothing: the decision after it is the first", () => {
    const v = verifyChainBytes(reseal([open(), outcome(1, "c", { approval_id: "apr-1" }), decision(2, "apr-1"), close(3)]));
    expect(describeVerdict(v)).toBe("Verified (unpinned)");
    expect(v.coverage).toEqual({ session_index: 0, seq: 3 });
  });

  it("an outcome's signature is required, and a verified one finishes its call", () => {
    const unsigned = verifyChainBytes(reseal([open(), intent(1, "c"), outcome(2, "c"), close(3)], { unsigned: [2] }));
    expect(describeVerdict(unsigned)).toBe("Tampered: line at session 0 seq 2: line carries no signature");
    const twoSessions = reseal([open(), intent(1, "c"), outcome(2, "c"), intent(3, "d"), open(), close(1)]);
    const v = verifyChainBytes(twoSessions);
    expect(describeVerdict(v)).toBe("Verified (unpinned)");
    expect(v.unfinished_calls).toEqual({ count: 1, calls: [{ call_id: "d", session_index: 0 }] });
  });
});

describe("step 5: opening a Session", () => {
  it("[M8.2] an open whose prev_hash is a digest but not the genesis digest is malformed", () => {
    const rows = rowsOf(reseal([open(), close(1)]).replace(GENESIS, "ab".repeat(32)));
    const first = verifyChainBytes(file(rows));
    expect(reasonOf(first)).toEqual({ status: "tampered", code: "malformed_line", line: 1, detail: "open line does not anchor on the genesis digest" });
    expect(describeVerdict(first)).toBe("Tampered: line 1: open line does not anchor on the genesis digest");

    // A second Session's open that chains to the tail, as a continuing Line would.
    const session = rowsOf(reseal([open(), close(1)]));
    const tail = LineHash.of(session[1] ?? "") as string;
    const second = reseal([{ ...open(), prev_hash: tail, prev_session_tail: tail }], { chain: false });
    const v = verifyChainBytes(file([...session, ...rowsOf(second)]));
    expect(describeVerdict(v)).toBe("Tampered: line 3: open line does not anchor on the genesis digest");
    expect(v.sessions).toBe(1);
  });

  it("an open with no public_key, or one that is not 64 lowercase hex, is malformed, not thrown on", () => {
    const signed = rowsOf(reseal([open(), close(1)]));
    const keyMember = `"public_key":"${DEV.publicKeyHex}",`;
    for (const replacement of ["", '"public_key":7,', `"public_key":"${DEV.publicKeyHex.slice(2)}",`, `"public_key":"${DEV.publicKeyHex.toUpperCase()}",`]) {
      const rows = [...signed];
      rows[0] = (rows[0] ?? "").replace(keyMember, replacement);
      const v = verifyChainBytes(file(rows));
      expect(reasonOf(v), replacement).toEqual({ status: "tampered", code: "malformed_line", line: 1, detail: "open line carries no public key" });
      expect(describeVerdict(v)).toBe("Tampered: line 1: open line carries no public key");
      expect(v.key_ids).toEqual([]);
    }
  });

  it("the second Session's position, key and count are its own", () => {
    const text = reseal([open(), close(1), open(), intent(1, "x"), intent(2, "y")], { signWith: new Map([[2, OTHER]]) });
    const v = verifyChainBytes(text);
    expect(reasonOf(v)).toEqual({ status: "indeterminate", code: "unanchored_tail", session_index: 1, in_flight: ["x", "y"] });
    expect(describeVerdict(v)).toBe("Indeterminate: session 1 has no close record and nothing anchors beyond it; 2 call(s) in flight");
    expect(v.key_ids).toEqual([DEV.keyId, OTHER.keyId]);
    expect(v.sessions).toBe(2);
    expect(v.coverage).toEqual({ session_index: 1, seq: 0 });
  });

  it("a third Session's open is refused when untrusted, at its own position", () => {
    const text = reseal([open(), close(1), open(), close(1), open(), close(1)], { signWith: new Map([[4, OTHER]]) });
    const v = verifyChainBytes(text, { trust: [DEV.publicKeyHex] });
    expect(reasonOf(v)).toEqual({ status: "tampered", code: "untrusted_key", at: { session_index: 2, seq: 0 }, key_id: OTHER.keyId });
    expect(v.key_ids).toEqual([DEV.keyId, OTHER.keyId]);
    expect(v.sessions).toBe(2);
  });
});

describe("step 6: a Line of a type this verifier does not know", () => {
  const attestation = (seq: number, extra: Line = {}): Line => ({ schema_version: 2, line_type: "attestation", seq, ...extra });

  it("signed and verifying: capped, and its signature covers it and the intents before it", () => {
    // reseal signs any Line that carries a signature member.
    const text = reseal([open(), intent(1, "c"), attestation(2, { signature: "" })]);
    const v = verifyChainBytes(text);
    expect(reasonOf(v)).toEqual({ status: "indeterminate", code: "unknown_line_type", at: { session_index: 0, seq: 2 }, line_type: "attestation" });
    expect(describeVerdict(v)).toBe("Indeterminate: unknown line type `attestation` at session 0 seq 2, newer emitter");
    expect(v.coverage).toEqual({ session_index: 0, seq: 2 });
  });

  it("signed but altered: Tampered, whatever the type", () => {
    const rows = rowsOf(reseal([open(), attestation(1, { note: "a", signature: "" }), close(2)]));
    rows[1] = (rows[1] ?? "").replace('"note":"a"', '"note":"b"');
    const v = verifyChainBytes(file(rows));
    expect(describeVerdict(v)).toBe("Tampered: line at session 0 seq 1: signature does not match this line");
  });

  it("with a key_id but no signature: unsigned, so capped and not covered", () => {
    const text = reseal([open(), attestation(1, { key_id: DEV.keyId }), close(2)]);
    const v = verifyChainBytes(text);
    expect(describeVerdict(v)).toBe("Indeterminate: unknown line type `attestation` at session 0 seq 1, newer emitter");
    expect(v.coverage).toEqual({ session_index: 0, seq: 2 });
  });

  it("signed under another Session's key: Tampered as a key mismatch", () => {
    const text = reseal([open(), attestation(1, { signature: "" }), close(2)], { signWith: new Map([[1, OTHER]]) });
    const v = verifyChainBytes(text);
    expect(describeVerdict(v)).toBe(`Tampered: line at session 0 seq 1: line was signed under key ${OTHER.keyId}, not ${DEV.keyId}`);
  });
});

afterAll(async () => {
  await sharedPool(1).close();
});

describe("[M8.9] the parallel walk stops where the sequential one does", () => {
  it("a signature that fails early: the keys of later Sessions, read before the answer came, are not reported", async () => {
    // The outcome's signature is another message's: only the curve arithmetic, deferred, refuses it.
    const wrong = Buffer.from(DEV.sign(Buffer.from("another message"))).toString("hex");
    const bytes = chained(
      [open(), intent(1, "c"), outcome(2, "c", { key_id: DEV.keyId, signature: wrong }), close(3), open(), close(1)],
      [DEV, DEV, DEV, DEV, OTHER, OTHER],
    );
    const sequential = verifyChainBytes(bytes);
    expect(describeVerdict(sequential)).toBe("Tampered: line at session 0 seq 2: signature does not match this line");
    expect(sequential.key_ids).toEqual([DEV.keyId]);
    // Every check in one batch, sent after the last row: the walk has read the second open by then.
    const parallel = await verifyChainBytesParallel(bytes, { threads: 1 }, { inline: 0, inlineWhenRunning: 0, eager: true, batch: 1000, windowPerThread: 1 });
    expect(parallel).toStrictEqual(sequential);
  });

  it("a signature that fails at the first Line: no coverage and no head, as in the sequential walk", async () => {
    const wrong = Buffer.from(DEV.sign(Buffer.from("another message"))).toString("hex");
    const bytes = chained([{ ...open(), key_id: DEV.keyId, signature: wrong }, close(1), open(), close(1)], [DEV, DEV, OTHER, OTHER]);
    const sequential = verifyChainBytes(bytes);
    expect(describeVerdict(sequential)).toBe("Tampered: line at session 0 seq 0: signature does not match this line");
    const parallel = await verifyChainBytesParallel(bytes, { threads: 1 }, { inline: 0, inlineWhenRunning: 0, eager: true, batch: 1000, windowPerThread: 1 });
    expect(parallel).toStrictEqual(sequential);
    expect("coverage" in parallel || "head" in parallel).toBe(false);
  });
});
