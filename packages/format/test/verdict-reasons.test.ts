import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SigningKey, describeVerdict, type Verification } from "../src/index.js";
import { DEV, readLines, reseal, tempDir, writeSession, type Line } from "./support/chains.js";
import { verifyChainFile } from "../src/verify/verify-record.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";

/**
 * One test per verdict reason (SPEC §8): each file is written by our writer, then altered
 * in exactly one way, and the verdict, reason code and position are asserted.
 */
let lines: Line[];
let text: string;

beforeAll(async () => {
  const path = await writeSession(join(tempDir(), "session.aarl"));
  lines = readLines(path);
  text = reseal(lines);
});

function reason(v: Verification): Record<string, unknown> {
  return v.verdict.status === "verified" ? {} : { status: v.verdict.status, ...v.verdict.reason };
}

describe("the unaltered Session", () => {
  it("is Verified, pinned to its key when the key is supplied", () => {
    const v = verifyChainBytes(text, { trust: [Buffer.from(DEV.publicKey).toString("hex")] });
    expect(v.verdict.status).toBe("verified");
    expect(v.trust).toBe("pinned");
    expect(describeVerdict(v)).toBe(`Verified (pinned to ${DEV.keyId})`);
    expect(v.coverage).toEqual({ session_index: 0, seq: lines.length - 1 });
  });

  it("reseal reproduces the writer's bytes, so every altered file differs only where altered", async () => {
    const path = await writeSession(join(tempDir(), "again.aarl"));
    expect(reseal(readLines(path))).toBe(text);
  });
});

describe("Tampered", () => {
  it("[M8.2] chain_broken: a prev_hash that names another line", () => {
    const edited = lines.map((l, i) => (i === 3 ? { ...l, prev_hash: "f".repeat(64) } : l));
    const v = verifyChainBytes(reseal(edited, { chain: false }));
    expect(reason(v)).toMatchObject({ status: "tampered", code: "chain_broken", at: { session_index: 0, seq: 3 }, found: "f".repeat(64) });
    expect(v.coverage).toEqual({ session_index: 0, seq: 2 });
  });

  it("chain_broken: a line removed from the middle", () => {
    const v = verifyChainBytes(
      reseal(lines, {})
        .split("\n")
        .filter((_, i) => i !== 2)
        .join("\n"),
    );
    expect(reason(v)).toMatchObject({ code: "chain_broken", at: { session_index: 0, seq: 3 } });
  });

  it("[M8.3] seq_out_of_order: a seq that goes backwards over an intact chain", () => {
    const edited = lines.map((l, i) => (i === 4 ? { ...l, seq: 2 } : l));
    expect(reason(verifyChainBytes(reseal(edited)))).toMatchObject({ code: "seq_out_of_order", session_index: 0, expected: 4, found: 2 });
  });

  it("seq_out_of_order: an open whose seq is not 0", () => {
    const edited = lines.map((l, i) => (i === 0 ? { ...l, seq: 1 } : l));
    expect(reason(verifyChainBytes(reseal(edited)))).toMatchObject({ code: "seq_out_of_order", session_index: 0, expected: 0, found: 1 });
  });

  it("bad_signature: an outcome with no signature (a stripped signature)", () => {
    const v = verifyChainBytes(reseal(lines, { unsigned: [2] }));
    expect(reason(v)).toMatchObject({ code: "bad_signature", at: { session_index: 0, seq: 2 }, source: { code: "unsigned" } });
  });

  it("bad_signature: one altered character of a signature", () => {
    const row = text.split("\n")[2] ?? "";
    const altered = row.replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === "0" ? "1" : "0"}`);
    const v = verifyChainBytes(text.replace(row, altered));
    expect(reason(v)).toMatchObject({ code: "bad_signature", at: { session_index: 0, seq: 2 }, source: { code: "bad_signature" } });
  });

  it("[M8.6] bad_signature: a line signed under another key than its Session's (key_mismatch)", () => {
    const other = SigningKey.fromSeed(new Uint8Array(32).fill(9));
    const v = verifyChainBytes(reseal(lines, { signWith: new Map([[2, other]]) }));
    expect(reason(v)).toMatchObject({
      code: "bad_signature",
      at: { session_index: 0, seq: 2 },
      source: { code: "key_mismatch", expected: DEV.keyId, found: other.keyId },
    });
  });

  it("[M7.1] session_boundary_broken: a non-final Session truncated", () => {
    const two = reseal([...lines, ...lines]);
    const rows = two.split("\n").filter((r) => r.length > 0);
    const withoutLastOfFirst = [...rows.slice(0, lines.length - 1), ...rows.slice(lines.length)].join("\n") + "\n";
    const v = verifyChainBytes(withoutLastOfFirst);
    expect(reason(v)).toMatchObject({ code: "session_boundary_broken", session_index: 1 });
  });

  it("session_boundary_broken: a second Session with no prev_session_tail", () => {
    const v = verifyChainBytes(reseal(lines) + reseal(lines));
    expect(reason(v)).toMatchObject({ code: "session_boundary_broken", session_index: 1 });
    expect(v.verdict.status === "tampered" && v.verdict.reason.code === "session_boundary_broken" && v.verdict.reason.found).toBeUndefined();
  });

  it("[M8.1] malformed_line: a line that is not JSON, before the last", () => {
    const rows = text.split("\n");
    rows.splice(2, 0, "this is not json");
    const v = verifyChainBytes(rows.join("\n"));
    expect(reason(v)).toMatchObject({ code: "malformed_line", line: 3 });
    expect(describeVerdict(v)).toBe("Tampered: line 3: not JSON: expected ident at line 1 column 2");
  });

  it("malformed_line: a float in a line has no reproducible hash", () => {
    const edited = lines.map((l, i) => (i === 2 ? { ...l, wall_ms: 1.5 } : l));
    const rows = reseal(lines).split("\n");
    rows[2] = JSON.stringify(edited[2]);
    const v = verifyChainBytes(rows.join("\n"));
    expect(reason(v)).toMatchObject({ code: "malformed_line", line: 3 });
    expect(describeVerdict(v)).toContain("floating-point value at $.wall_ms is outside the JCS value space");
  });

  it("[M5.3] malformed_line: a row without the members every Line carries", () => {
    const cases: [Line, string][] = [
      [{ schema_version: 1, phase: "outcome", call_id: "legacy" }, "no line_type"],
      [{ ...lines[1], line_type: 7 }, "no line_type"],
      [withoutKey(lines[1], "seq"), "no seq"],
      [{ ...lines[1], seq: "1" }, "no seq"],
      [{ ...lines[1], prev_hash: String(lines[1]?.["prev_hash"]).toUpperCase() }, "no prev_hash"],
    ];
    for (const [row, detail] of cases) {
      const rows = text.split("\n");
      rows[1] = JSON.stringify(row);
      expect(reason(verifyChainBytes(rows.join("\n"))), detail).toMatchObject({ code: "malformed_line", line: 2, detail });
    }
    expect(reason(verifyChainBytes("[1,2]\n"))).toMatchObject({ code: "malformed_line", line: 1, detail: "no line_type" });
  });

  it("[M2.1] malformed_line: an open whose public key is in uppercase hex", () => {
    const rows = text.split("\n");
    rows[0] = (rows[0] ?? "").replace(/"public_key":"([0-9a-f]{64})"/, (_, k: string) => `"public_key":"${k.toUpperCase()}"`);
    expect(reason(verifyChainBytes(rows.join("\n")))).toMatchObject({ code: "malformed_line", line: 1, detail: "open line carries no public key" });
  });

  it("[M12.1] members a verifier does not know are ignored but hashed", () => {
    const extended = lines.map((l, i) => (i === 2 ? { ...l, note_from_newer_emitter: "kept" } : l));
    const sealed = reseal(extended);
    expect(verifyChainBytes(sealed).verdict.status).toBe("verified");
    const v = verifyChainBytes(sealed.replace('"kept"', '"kEpt"'));
    expect(reason(v)).toMatchObject({ code: "bad_signature", at: { session_index: 0, seq: 2 } });
  });

  it("malformed_line: a file that does not begin with an open line", () => {
    const v = verifyChainBytes(text.split("\n").slice(1).join("\n"));
    expect(reason(v)).toMatchObject({ code: "malformed_line", line: 1, detail: "chain does not begin with an open line" });
  });

  it("untrusted_key: a trust store that does not hold the Session's key", () => {
    const other = SigningKey.fromSeed(new Uint8Array(32).fill(9));
    const v = verifyChainBytes(text, { trust: [Buffer.from(other.publicKey).toString("hex")] });
    expect(reason(v)).toMatchObject({ code: "untrusted_key", at: { session_index: 0, seq: 0 }, key_id: DEV.keyId });
    expect(v.trust).toBe("unpinned");
  });

  it("[M8.4] untrusted_key: an empty trust store pins to nothing", () => {
    expect(reason(verifyChainBytes(text, { trust: [] }))).toMatchObject({ code: "untrusted_key" });
  });

  it("duplicate_decision: a second verdict for one park", () => {
    const decision = lines.find((l) => l["line_type"] === "decision");
    const close = lines.at(-1);
    if (decision === undefined || close === undefined) throw new Error("fixture lacks a decision");
    const edited = [...lines.slice(0, -1), { ...decision, verdict: { verdict: "approved", scope: { tool_id: "net.post" } } }, close];
    const v = verifyChainBytes(reseal(edited.map((l, i) => ({ ...l, seq: i }))));
    expect(reason(v)).toMatchObject({ code: "duplicate_decision", at: { session_index: 0, seq: lines.length - 1 }, approval_id: "apr-1" });
  });
});

describe("Indeterminate", () => {
  it("[M5.2] unknown_line_type: an unsigned line of a newer type, token kept", () => {
    const edited = [...lines.slice(0, 3), { schema_version: 2, line_type: "attestation", seq: 3, prev_hash: "" }, ...lines.slice(3)];
    const v = verifyChainBytes(reseal(edited.map((l, i) => ({ ...l, seq: i }))));
    expect(reason(v)).toMatchObject({ status: "indeterminate", code: "unknown_line_type", at: { session_index: 0, seq: 3 }, line_type: "attestation" });
    expect(v.coverage).toEqual({ session_index: 0, seq: edited.length - 1 });
  });

  it("an unknown line type whose present signature fails is Tampered, not capped", () => {
    const edited = [...lines.slice(0, 3), { schema_version: 2, line_type: "attestation", seq: 3, prev_hash: "", signature: "00" }, ...lines.slice(3)];
    const sealed = reseal(edited.map((l, i) => ({ ...l, seq: i }))).split("\n");
    sealed[3] = (sealed[3] ?? "").replace(/"key_id":"[0-9a-f]{64}",/, "");
    const v = verifyChainBytes(sealed.join("\n"));
    // Removing key_id changed the line's hash: the next line no longer chains.
    expect(v.verdict.status).toBe("tampered");
    expect(reason(v)).toMatchObject({ code: "bad_signature", at: { session_index: 0, seq: 3 }, source: { code: "unsigned" } });
  });

  it("reserved_checkpoint: a signed checkpoint extends coverage and caps", () => {
    const edited = [...lines.slice(0, 3), { schema_version: 2, line_type: "checkpoint", seq: 3, prev_hash: "" }, ...lines.slice(3)];
    const v = verifyChainBytes(reseal(edited.map((l, i) => ({ ...l, seq: i }))));
    expect(reason(v)).toMatchObject({ code: "reserved_checkpoint", at: { session_index: 0, seq: 3 } });
  });

  it("torn_final_line: the last line cut short", () => {
    const v = verifyChainBytes(text.slice(0, text.length - 20));
    expect(reason(v)).toMatchObject({ code: "torn_final_line", line: lines.length });
    expect(v.coverage).toEqual({ session_index: 0, seq: lines.length - 2 });
  });

  it("unanchored_tail: no close, with the calls in flight named", () => {
    const open = lines.slice(0, 2);
    const v = verifyChainBytes(reseal([...open, { ...open[1], call_id: "call-x", seq: 2 } as Line]));
    expect(reason(v)).toMatchObject({ code: "unanchored_tail", session_index: 0, in_flight: ["call-0", "call-x"] });
    expect(v.coverage).toEqual({ session_index: 0, seq: 0 });
  });

  it("missing_line: a seq gap over an intact chain (a write that did not land)", () => {
    const edited = lines.filter((_, i) => i !== 2);
    const v = verifyChainBytes(reseal(edited));
    expect(reason(v)).toMatchObject({ code: "missing_line", session_index: 0, expected: 2, found: 3 });
  });

  it("empty_chain: no lines, or only blank ones", () => {
    expect(reason(verifyChainBytes(""))).toEqual({ status: "indeterminate", code: "empty_chain" });
    expect(reason(verifyChainBytes("\n  \n\t\r\n"))).toEqual({ status: "indeterminate", code: "empty_chain" });
  });

  it("line_too_long (aegis-ts): a row over the bound stops the walk", () => {
    const v = verifyChainBytes(text, { maxRowBytes: 600 });
    expect(reason(v)).toMatchObject({ code: "line_too_long", line: 3, limit: 600 });
  });
});

describe("precedence", () => {
  it("the first cap wins over a later one", () => {
    const edited = [
      ...lines.slice(0, 2),
      { schema_version: 2, line_type: "attestation", seq: 0, prev_hash: "" },
      { schema_version: 2, line_type: "checkpoint", seq: 0, prev_hash: "" },
      ...lines.slice(2),
    ];
    expect(reason(verifyChainBytes(reseal(edited.map((l, i) => ({ ...l, seq: i })))))).toMatchObject({ code: "unknown_line_type" });
  });

  it("a later Tampered overrides a cap", () => {
    const edited = [...lines.slice(0, 2), { schema_version: 2, line_type: "attestation", seq: 2, prev_hash: "" }, ...lines.slice(2)];
    const rows = reseal(edited.map((l, i) => ({ ...l, seq: i }))).split("\n");
    rows[5] = (rows[5] ?? "").replace('"seq":5', '"seq":1');
    expect(reason(verifyChainBytes(rows.join("\n")))).toMatchObject({ status: "tampered", code: "seq_out_of_order", expected: 5, found: 1 });
  });

  it("a torn final line does not override an earlier cap", () => {
    const edited = [...lines.slice(0, 2), { schema_version: 2, line_type: "attestation", seq: 2, prev_hash: "" }, ...lines.slice(2)];
    const sealed = reseal(edited.map((l, i) => ({ ...l, seq: i })));
    expect(reason(verifyChainBytes(sealed.slice(0, sealed.length - 10)))).toMatchObject({ code: "unknown_line_type" });
  });

  it("[M8.5] verifying a file gives the same answer as verifying its bytes, every time", async () => {
    const dir = tempDir();
    const variants = [text, reseal(lines, { unsigned: [2] }), text.slice(0, -15), reseal(lines.slice(0, 4)), ""];
    for (const [i, bytes] of variants.entries()) {
      const path = join(dir, `file-${i}.aarl`);
      writeFileSync(path, bytes);
      const first = await verifyChainFile(path);
      expect(await verifyChainFile(path)).toEqual(first);
      expect(verifyChainBytes(bytes)).toEqual(first);
    }
  });
});

function withoutKey(line: Line | undefined, key: string): Line {
  const copy: Line = { ...line };
  delete copy[key];
  return copy;
}
