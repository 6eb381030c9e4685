import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { KeyId, LineHash, PrevHash, SigningKey, describeVerdict, type Verification } from "../src/index.js";
import { canonicalize, tryCanonicalize, JsonSyntaxError, parseJson, insecureDevKey } from "../src/internal.js";
import { SMALL_ORDER_ENCODINGS } from "../src/crypto/ed25519.js";
import { manifestEntries } from "./support/manifest.js";
import { vectorPath } from "./support/vectors.js";
import { verifyChainFile } from "../src/verify/verify-record.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";

/**
 * Rules SPEC.md states that no vector pins on its own: the number classes of §3.3 at
 * their boundaries, fault paths (§3.2), the result's field names (§8.3, checked against
 * the SPEC's own tables), what the walk does not judge (§8.2 [M8.8]), `in_flight` (§8.1),
 * the fourteen small-order encodings (§8.5, against the SPEC's list), over-long rows
 * (§13.1) and the counts of §13.4.
 */
const SPEC = readFileSync(fileURLToPath(new URL("../../../SPEC.md", import.meta.url)), "utf8");

/** The text of one SPEC section, from its heading to the next heading of level 2 or 3. */
function section(number: string): string {
  const start = SPEC.search(new RegExp(`^#{2,3} ${number.replace(".", "\\.")}\\.? `, "m"));
  expect(start, `SPEC §${number}`).toBeGreaterThanOrEqual(0);
  const rest = SPEC.slice(SPEC.indexOf("\n", start) + 1);
  const end = rest.search(/^#{2,3} /m);
  return end === -1 ? rest : rest.slice(0, end);
}

const DEV = insecureDevKey();
const GENESIS = PrevHash.GENESIS as string;
const SIGNED = new Set(["open", "outcome", "decision", "close", "checkpoint"]);

/**
 * A tiny emitter (SPEC §4), independent of the writer: `seq` and `prev_hash` are set here,
 * every signed type is signed unless it already carries a `signature`, and nothing else
 * about the Line is checked, so Lines §5.3 would not allow can be written.
 */
function emit(lines: readonly Record<string, unknown>[], key: SigningKey = DEV): string {
  let tail: string | undefined;
  let seq = 0;
  let out = "";
  for (const original of lines) {
    const line: Record<string, unknown> = { ...original };
    const type = line["line_type"];
    if (type === "open") {
      seq = 0;
      line["prev_hash"] = GENESIS;
      if (tail !== undefined && !("prev_session_tail" in line)) line["prev_session_tail"] = tail;
      line["public_key"] ??= key.publicKeyHex;
    } else {
      line["prev_hash"] = tail;
    }
    line["seq"] ??= seq;
    if (typeof type === "string" && SIGNED.has(type) && !("signature" in line)) {
      line["key_id"] = key.keyId;
      line["signature"] = Buffer.from(key.sign(Buffer.from(canonicalize(line, "signature"), "utf8"))).toString("hex");
    }
    const text = canonicalize(line);
    out += `${text}\n`;
    tail = LineHash.of(text);
    seq = (line["seq"] as number) + 1;
  }
  return out;
}

const OUTCOME = {
  line_type: "outcome",
  schema_version: 2,
  call_id: "c1",
  tool_id: "t",
  request_digest: "a".repeat(64),
  policy_set_hash: "b".repeat(64),
  policy: { status: "allowed" },
  capability: { status: "denied", reason: "not evaluated" },
  execution: { status: "success" },
  decision_axes: {},
};

function without(line: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  const out = { ...line };
  for (const name of names) delete out[name];
  return out;
}

function reasonOf(v: Verification): Record<string, unknown> | null {
  return v.verdict.status === "verified" ? null : { ...v.verdict.reason };
}

/** What §3.3 and §3.2 make of a row: a fault code, `not_json`, or the canonical text. */
function classify(row: string): string {
  let value;
  try {
    value = parseJson(row);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return "not_json";
    throw error;
  }
  const result = tryCanonicalize(value);
  return result.ok ? result.text : `${result.fault.code} ${result.fault.path}`;
}

describe("SPEC §3.3: numbers are judged by how they are written", () => {
  const limit = 2n ** 1024n - 2n ** 970n;
  it.each([
    ["18446744073709551615", "integer_too_large $.a"],
    ["18446744073709551616", "float_not_allowed $.a"],
    ["9007199254740991", '{"a":9007199254740991}'],
    ["9007199254740992", "integer_too_large $.a"],
    ["-9007199254740993", "negative_integer $.a"],
    ["-9223372036854775808", "negative_integer $.a"],
    ["-9223372036854775809", "float_not_allowed $.a"],
    ["-0", "float_not_allowed $.a"],
    ["0e0", "float_not_allowed $.a"],
    ["1.0", "float_not_allowed $.a"],
    ["1e-400", "float_not_allowed $.a"],
    ["1.7976931348623158e308", "float_not_allowed $.a"],
    ["1.7976931348623159e308", "not_json"],
    ["1e400", "not_json"],
    ["-1e400", "not_json"],
    [(limit - 1n).toString(), "float_not_allowed $.a"],
    [limit.toString(), "not_json"],
    [(-(limit - 1n)).toString(), "float_not_allowed $.a"],
    [(-limit).toString(), "not_json"],
  ])("[M3.3] %s", (literal, expected) => {
    expect(classify(`{"a":${literal}}`)).toBe(expected);
  });

  it("[M3.3] a repeated key: compared unescaped, the earlier value dropped but still read", () => {
    expect(classify('{"a":null,"a":1}')).toBe('{"a":1}');
    expect(classify('{"a":1,"\\u0061":null}')).toBe("null_not_allowed $.a");
    expect(classify('{"a":1e400,"a":1}')).toBe("not_json");
  });
});

describe("SPEC §3.2: fault paths", () => {
  it("[M3.2] keys are written unescaped, and the first fault in canonical order is named", () => {
    expect(classify('{"a.b":1.5}')).toBe("float_not_allowed $.a.b");
    expect(classify('{"a":{"b":1.5}}')).toBe("float_not_allowed $.a.b");
    expect(classify('{"":null}')).toBe("null_not_allowed $.");
    expect(classify('{"a\\nb":null}')).toBe("null_not_allowed $.a\nb");
    expect(classify('{"b":null,"a":[1,{"d":null,"c":-1}]}')).toBe("negative_integer $.a[1].c");
  });

  it("[M3.2] the fault codes and texts are the ones the SPEC tabulates", () => {
    const table = section("3.2");
    for (const [row, text] of [
      ['{"x":1.5}', "floating-point value at $.x is outside the JCS value space"],
      ['{"x":9007199254740992}', "integer 9007199254740992 at $.x is at or above 2^53 (max 9007199254740991)"],
      ['{"x":-1}', "negative integer at $.x is outside the JCS value space"],
      ['{"x":null}', "null at $.x; absent fields must be omitted, never null"],
    ] as const) {
      const v = verifyChainBytes(`${emit([{ line_type: "open", schema_version: 2 }])}${row}\n`);
      const reason = reasonOf(v);
      expect(reason).toMatchObject({ code: "malformed_line", line: 2 });
      expect(reason?.["detail"]).toBe(`outside the canonical value space, so it has no reproducible hash: ${text}`);
      const code = classify(row).split(" ")[0] ?? "";
      const template = text.replace("$.x", "<path>").replace("9007199254740992", "<value>");
      expect(table).toContain(`| \`${code}\` | \`${template}\` |`);
    }
  });
});

describe("SPEC §8.2: nothing else is judged", () => {
  it("[M8.8] members the walk does not name, or §5.3 requires, leave a file Verified", () => {
    const text = emit([
      // A first open carrying prev_session_tail, without schema_version.
      { line_type: "open", prev_session_tail: "c".repeat(64) },
      // An intent whose call_id is a number and whose signature would not verify.
      { line_type: "intent", schema_version: 2, call_id: 5, signature: "zz", key_id: "not a key id" },
      // An outcome without call_id or policy, of a schema_version that is not 2.
      without({ ...OUTCOME, schema_version: 7 }, "call_id", "policy"),
      // Two decisions whose approval_id is not a string: not recorded, so not duplicates.
      { line_type: "decision", schema_version: 2, approval_id: 5 },
      { line_type: "decision", schema_version: 2, approval_id: 5 },
      { line_type: "close", schema_version: 2 },
    ]);
    const v = verifyChainBytes(text);
    expect(describeVerdict(v)).toBe("Verified (unpinned)");
    expect(v.coverage).toEqual({ session_index: 0, seq: 5 });
    // With string approval_ids the same two decisions are judged.
    const resigned = emit([{ line_type: "open" }, { line_type: "decision", approval_id: "5" }, { line_type: "decision", approval_id: "5" }]);
    expect(reasonOf(verifyChainBytes(resigned))).toMatchObject({ code: "duplicate_decision", approval_id: "5" });
  });
});

describe("SPEC §8.1: in_flight", () => {
  it("is a list in file order that keeps repeats, emptied by a verified signature", () => {
    const intent = (id: string) => ({ line_type: "intent", call_id: id, tool_id: "t", request_digest: "a".repeat(64) });
    const v = verifyChainBytes(emit([{ line_type: "open" }, intent("x"), intent("y"), intent("x")]));
    expect(reasonOf(v)).toEqual({ code: "unanchored_tail", session_index: 0, in_flight: ["x", "y", "x"] });
    expect(describeVerdict(v)).toBe("Indeterminate: session 0 has no close record and nothing anchors beyond it; 3 call(s) in flight");
    const after = verifyChainBytes(emit([{ line_type: "open" }, intent("x"), OUTCOME, intent("z")]));
    expect(reasonOf(after)).toMatchObject({ in_flight: ["z"] });
  });
});

describe("SPEC §8.4 step 4 and §8.5", () => {
  it("[M8.7] the fourteen small-order encodings are the ones SPEC §8.5 lists", () => {
    const listed = [...section("8.5").matchAll(/^([0-9a-f]{64}) {2}order [1248]\b/gm)].map((m) => m[1]);
    expect(listed).toHaveLength(14);
    expect(new Set(listed)).toEqual(new Set(SMALL_ORDER_ENCODINGS));
  });

  it("[M8.7] a non-canonical y decodes; a small-order key fails at step 5, not step 4", () => {
    const fault = (publicKey: string) => {
      const keyId = KeyId.of(Buffer.from(publicKey, "hex"));
      const text = emit([{ line_type: "open", public_key: publicKey, key_id: keyId, signature: "0".repeat(128) }]);
      return reasonOf(verifyChainBytes(text))?.["source"];
    };
    // y = p + 3 decodes to a point that is not of small order; y = p + 2 is not a point.
    expect(fault(`f0${"f".repeat(60)}7f`)).toEqual({ code: "bad_signature" });
    expect(fault(`ef${"f".repeat(60)}7f`)).toEqual({ code: "malformed_public_key" });
    // Small order, canonical and not: refused as bad_signature.
    expect(fault(`ed${"f".repeat(60)}7f`)).toEqual({ code: "bad_signature" });
    expect(fault(`01${"0".repeat(60)}80`)).toEqual({ code: "bad_signature" });
  });
});

describe("SPEC §8.3: the reasons' fields are the ones the SPEC tabulates", () => {
  /** Code -> [required fields, optional fields], read off the SPEC's two tables. */
  function specFields(): Map<string, { required: Set<string>; optional: Set<string> }> {
    const out = new Map<string, { required: Set<string>; optional: Set<string> }>();
    for (const m of section("8.3").matchAll(/^\| `([a-z_]+)` \| ([^|]*) \|/gm)) {
      const required = new Set<string>();
      const optional = new Set<string>();
      for (const f of (m[2] ?? "").matchAll(/`([a-z_]+)`( \(omitted when none\))?/g)) {
        (f[2] === undefined ? required : optional).add(f[1] ?? "");
      }
      out.set(m[1] ?? "", { required, optional });
    }
    return out;
  }

  async function everyReason(): Promise<Record<string, unknown>[]> {
    const reasons: Record<string, unknown>[] = [];
    for (const entry of manifestEntries("chain")) {
      const trust = entry.input["trust"] as string[] | null;
      const v = await verifyChainFile(vectorPath(String(entry.input["record"])), trust === null ? {} : { trust });
      const r = reasonOf(v);
      if (r !== null) reasons.push(r);
    }
    // Two reasons no vector has: line_too_long, and a boundary whose found is none.
    const session = emit([{ line_type: "open" }, { line_type: "close" }]);
    reasons.push(reasonOf(verifyChainBytes(`${session}{"x":"${"y".repeat(2000)}"}\n`, { maxRowBytes: 1000 })) ?? {});
    reasons.push(reasonOf(verifyChainBytes(session + emit([{ line_type: "open" }]))) ?? {});
    return reasons;
  }

  it("every code the walk reports has exactly the fields of its table row", async () => {
    const table = specFields();
    expect(table.size).toBe(14);
    const seen = new Set<string>();
    for (const reason of await everyReason()) {
      const { code, ...fields } = reason;
      const row = table.get(String(code));
      expect(row, `SPEC §8.3 has no row for ${String(code)}`).toBeDefined();
      if (row === undefined) continue;
      seen.add(String(code));
      for (const name of Object.keys(fields)) {
        expect(row.required.has(name) || row.optional.has(name), `${String(code)}.${name}`).toBe(true);
        expect(fields[name], `${String(code)}.${name} is never null`).not.toBeNull();
      }
      for (const name of row.required) expect(fields, `${String(code)} lacks ${name}`).toHaveProperty(name);
    }
    expect([...seen].sort()).toEqual([...table.keys()].sort());
  });

  it("a signature fault is {code}, with expected and found for key_mismatch", async () => {
    const sources = new Set<string>();
    for (const reason of await everyReason()) {
      const source = reason["source"] as Record<string, unknown> | undefined;
      if (source === undefined) continue;
      sources.add(String(source["code"]));
      expect(Object.keys(source).sort()).toEqual(source["code"] === "key_mismatch" ? ["code", "expected", "found"] : ["code"]);
    }
    expect([...sources].sort()).toEqual(["bad_signature", "key_mismatch", "malformed_public_key", "unsigned"]);
  });

  it("session_boundary_broken omits found when the open carries none", () => {
    const session = emit([{ line_type: "open" }, { line_type: "close" }]);
    const r = reasonOf(verifyChainBytes(session + emit([{ line_type: "open", prev_session_tail: "A".repeat(64) }])));
    expect(r).toMatchObject({ code: "session_boundary_broken", session_index: 1 });
    expect(r).not.toHaveProperty("found");
  });
});

describe("SPEC §13.1 and §13.4: over-long rows and the counts", () => {
  const limit = 4096;
  const session = emit([{ line_type: "open" }, OUTCOME, { line_type: "close" }]);

  it("a row of White_Space is blank at any length", () => {
    const v = verifyChainBytes(`${session}${" \t".repeat(3 * limit)}\n`, { maxRowBytes: limit });
    expect(describeVerdict(v)).toBe("Verified (unpinned)");
    expect(v.lines).toBe(3);
  });

  it("an over-long row that is not blank takes a line number and stops the walk", () => {
    const v = verifyChainBytes(`${session}${" ".repeat(3 * limit)}x\n`, { maxRowBytes: limit });
    expect(reasonOf(v)).toEqual({ code: "line_too_long", line: 4, limit });
    expect(v.lines).toBe(4);
  });

  it("a row that does not parse, then an over-long row: malformed, and the later row is not counted", () => {
    const torn = `${session}{"line_ty\n`;
    const malformed = verifyChainBytes(`${torn}${"x".repeat(3 * limit)}\n`, { maxRowBytes: limit });
    expect(reasonOf(malformed)).toMatchObject({ code: "malformed_line", line: 4 });
    expect(malformed.lines).toBe(4);
    const stillTorn = verifyChainBytes(`${torn}${" ".repeat(3 * limit)}\n`, { maxRowBytes: limit });
    expect(reasonOf(stillTorn)).toEqual({ code: "torn_final_line", line: 4 });
  });

  it("sessions counts opens that reached step 5.7; head is the last Line accepted", () => {
    // Emitted on its own, the second open carries no prev_session_tail: refused at 5.3.
    const two = session + emit([{ line_type: "open" }, { line_type: "close" }]);
    const refused = verifyChainBytes(two);
    expect(reasonOf(refused)).toMatchObject({ code: "session_boundary_broken", session_index: 1 });
    expect(refused.sessions).toBe(1);
    expect(refused.head).toBe(LineHash.of(session.trimEnd().split("\n").at(-1) ?? ""));
    const empty = verifyChainBytes(emit([{ line_type: "open", signature: "0".repeat(128), key_id: DEV.keyId }]));
    expect(reasonOf(empty)).toMatchObject({ code: "bad_signature" });
    expect(empty.sessions).toBe(1);
    expect(empty.head).toBeUndefined();
    expect(empty.key_ids).toEqual([DEV.keyId]);
  });
});

// The JSON a vector compares is the Verification with absent values as null (SPEC §11.4).
describe("SPEC §11.4", () => {
  it("the chain vectors' expected members are those SPEC §8.6 and §13.4 name", () => {
    const names = new Set(["verdict", "reason", "text", "coverage", "key_ids", "trust_label", "lines", "sessions", "head", "unfinished_calls", "exit_code"]);
    for (const name of names) expect(section("11.4")).toContain(`"${name}"`);
    for (const entry of manifestEntries("chain")) expect(new Set(Object.keys(entry.expected))).toEqual(names);
  });
});
