import { join } from "node:path";
import { readFileSync } from "node:fs";
import { SigningKey, verifyChainBytes, describeVerdict } from "../../src/index.js";
import { DEV, readLines, reseal, tempDir, writeSession, type Line } from "./chains.js";

/**
 * The chain vectors of `vectors/chains/`: Sessions written by the real writer with fixed
 * keys, then altered in exactly one way. Deterministic (Ed25519 is, and nothing carries a
 * time), so the committed files are checked against a fresh build.
 */
export interface ChainVector {
  readonly name: string;
  readonly description: string;
  readonly trust: readonly string[] | null;
  readonly bytes: string;
}

export const ROTATED = SigningKey.fromSeed(new Uint8Array(32).fill(9));
const DEV_PUBLIC = Buffer.from(DEV.publicKey).toString("hex");

export async function buildChainVectors(): Promise<ChainVector[]> {
  const path = await writeSession(join(tempDir(), "base.aarl"));
  const base = readFileSync(path, "utf8");
  const lines = readLines(path);
  const rows = base.split("\n");
  const withRow = (i: number, row: string) => rows.map((r, j) => (j === i ? row : r)).join("\n");
  const renumber = (ls: Line[]) => ls.map((l, i) => ({ ...l, seq: i }));
  const decision = lines.find((l) => l["line_type"] === "decision") ?? {};
  const close = lines.at(-1) ?? {};
  // A second Session of the same calls, with its own park: one approval_id, one verdict.
  const again = lines.map((l) => JSON.parse(JSON.stringify(l).replaceAll('"apr-1"', '"apr-2"')) as Line);
  const v = (name: string, description: string, bytes: string, trust: readonly string[] | null = null): ChainVector => ({ name, description, trust, bytes });

  return [
    v("verified_unpinned", "A closed Session: open, two calls, a park and its decision, close.", base),
    v("verified_pinned", "The same Session with its public key in the trust set.", base, [DEV_PUBLIC]),
    v("verified_two_sessions", "A second Session appended; its open carries prev_session_tail.", reseal([...lines, ...again])),
    v("verified_rotated_pinned", "The second Session is signed by another key; both keys are trusted.", reseal([...lines, ...again], { signWith: new Map(lines.map((_, i) => [lines.length + i, ROTATED])) }), [DEV_PUBLIC, Buffer.from(ROTATED.publicKey).toString("hex")]),
    v("verified_unknown_member", "An outcome with a member this version does not define: ignored, hashed.", reseal(lines.map((l, i) => (i === 2 ? { ...l, x_newer_member: { nested: [1, 2] } } : l)))),
    v("chain_broken", "Line 4's prev_hash replaced by 64 'f' and the line re-signed.", reseal(lines.map((l, i) => (i === 3 ? { ...l, prev_hash: "f".repeat(64) } : l)), { chain: false })),
    v("seq_out_of_order", "Line 5 carries seq 2; chain and signatures intact.", reseal(lines.map((l, i) => (i === 4 ? { ...l, seq: 2 } : l)))),
    v("bad_signature_unsigned", "Line 3, an outcome, carries no signature (stripped by its emitter).", reseal(lines, { unsigned: [2] })),
    v("bad_signature_altered", "One hex digit of line 3's signature changed.", withRow(2, (rows[2] ?? "").replace(/"signature":"(.)/, (_, c: string) => `"signature":"${c === "0" ? "1" : "0"}`))),
    v("bad_signature_key_mismatch", "Line 3 is signed by a key the Session did not publish.", reseal(lines, { signWith: new Map([[2, ROTATED]]) })),
    v("session_boundary_broken", "Two Sessions; the last line of the first removed.", [...reseal([...lines, ...again]).split("\n").filter((_, i) => i !== lines.length - 1)].join("\n")),
    v("malformed_line_not_json", "Line 3 is not JSON and is not the last line.", withRow(2, "{not json")),
    v("malformed_line_float", "Line 3 holds a float, outside the value space.", withRow(2, (rows[2] ?? "").replace('"seq":2', '"seq":2.0'))),
    v("untrusted_key", "The Session is signed by a key outside the trust set.", base, [Buffer.from(ROTATED.publicKey).toString("hex")]),
    v("untrusted_key_empty_store", "An empty trust set pins to nothing.", base, []),
    v("duplicate_decision", "A second decision for the same approval_id, validly signed.", reseal(renumber([...lines.slice(0, -1), { ...decision, verdict: { verdict: "approved", scope: { tool_id: "net.post" } } }, close]))),
    v("unknown_line_type", "An unsigned line of type 'attestation' after line 3.", reseal(renumber([...lines.slice(0, 3), { schema_version: 2, line_type: "attestation", seq: 0, prev_hash: "" }, ...lines.slice(3)]))),
    v("reserved_checkpoint", "A signed checkpoint after line 3.", reseal(renumber([...lines.slice(0, 3), { schema_version: 2, line_type: "checkpoint", seq: 0, prev_hash: "" }, ...lines.slice(3)]))),
    v("torn_final_line", "The close line cut off 20 bytes before its end.", base.slice(0, base.length - 21)),
    v("unanchored_tail", "No close; the last call's intent has no outcome.", reseal(lines.slice(0, 4))),
    v("missing_line", "Line 3 never landed; the chain is intact around the gap.", reseal(lines.filter((_, i) => i !== 2))),
    v("empty_chain", "No lines at all.", ""),
  ];
}

/** What `vectors/chains/expected.json` holds for a vector: our verifier's full answer. */
export function expectedFor(vector: ChainVector): Record<string, unknown> {
  const result = verifyChainBytes(vector.bytes, vector.trust === null ? {} : { trust: vector.trust });
  return {
    file: `${vector.name}.aarl`,
    description: vector.description,
    trust: vector.trust,
    verdict: result.verdict.status,
    reason: result.verdict.status === "verified" ? null : result.verdict.reason,
    text: describeVerdict(result),
    coverage: result.coverage ?? null,
    key_ids: result.key_ids,
    trust_label: result.trust,
    lines: result.lines,
    sessions: result.sessions,
    head: result.head ?? null,
  };
}
