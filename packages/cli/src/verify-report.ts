import { sha256Hex } from "@aegis/format/internal";
import { describeVerdict, type UnfinishedCalls, type Verification } from "@aegis/format";
import { inFlight, summarizeUnfinishedCalls } from "./verify-view.js";

/**
 * `aegis verify` output. The text form is the reference's, byte for byte: the verdict line,
 * a `key_id` line per observed key, a `coverage` line when a signature verified, and an
 * `in_flight` line per call when the reason is an unanchored tail. No paths, no times.
 */
export function verifyText(v: Verification): string {
  return [...verifyTextParts(v)].join("");
}

/**
 * {@link verifyText} in parts of at most a thousand lines, to be written one by one: a file
 * can leave a million calls in flight, and their lines joined would be one huge string.
 */
export function* verifyTextParts(v: Verification): Generator<string> {
  const lines = [describeVerdict(v), ...v.key_ids.map((id) => `key_id ${id}`)];
  if (v.coverage !== undefined) lines.push(`coverage session ${v.coverage.session_index} seq ${v.coverage.seq}`);
  if (v.anchored !== undefined) lines.push(`anchored through line ${v.anchored.size} by checkpoint ${v.anchored.checkpoint}`);
  yield `${lines.join("\n")}\n`;
  const calls = inFlight(v);
  for (let from = 0; from < calls.length; from += 1000)
    yield `${calls
      .slice(from, from + 1000)
      .map((call) => `in_flight ${call}\n`)
      .join("")}`;
}

/**
 * A record signed by a key other than the one given, in plain words for stderr (SPEC §13.4
 * keeps stdout the reference's text, which speaks of a trust store and a fingerprint), or
 * undefined when the verdict is not that. `keys`: the --key values given, and whether a
 * trust store was named.
 */
export function describeForeignKey(v: Verification, keys: readonly string[], trustStore: boolean): string | undefined {
  if (v.verdict.status !== "tampered" || v.verdict.reason.code !== "untrusted_key") return undefined;
  const signer = v.verdict.reason.key_id;
  // The commonest mistake: the signer's key_id given as --key, where its public key belongs.
  if (keys.includes(signer))
    return `the record is signed by key_id ${signer}, which you gave as --key: --key takes the signer's public key (its .pub file, or public_key in the record's open line), not its key_id`;
  const given = [...new Set(keys.map((k) => sha256Hex(Buffer.from(k, "hex"))))];
  const named = given.map((id) => `key_id ${id}`).join(", ");
  const keysGiven = given.length === 1 ? `the key you gave (${named})` : `the keys you gave (${named})`;
  const yours = given.length === 0 ? "any key in the trust store" : trustStore ? `${keysGiven} nor any in the trust store` : keysGiven;
  return `the record is signed by key_id ${signer}, not by ${yours}: ask its signer for their public key`;
}

/**
 * A file that holds no record line at all (a hostname, a README): its verdict is the
 * reference's for a first row that does not parse ("torn write"), which reads as a damaged
 * record. Said plainly on stderr, or undefined. `start`: the file's first bytes.
 */
export function describeNotARecord(v: Verification, shown: string, start: Uint8Array): string | undefined {
  if (!mayBeNotARecord(v)) return undefined;
  // A record's rows are JSON objects; a first row torn by a crash still begins as one.
  const first = Buffer.from(start).toString("latin1").trimStart();
  if (first === "" || first.startsWith("{")) return undefined;
  return `${shown} is not a record: its first line does not begin as a JSON object, and every line of a record is one, from its open Line on`;
}

/**
 * Whether a verification leaves room for the file not being a record at all: no Session
 * began and the first row did not parse. Only then are its first bytes worth reading again.
 */
export function mayBeNotARecord(v: Verification): boolean {
  if (v.sessions > 0 || v.verdict.status === "verified") return false;
  const reason = v.verdict.status === "indeterminate" ? v.verdict.reason.code : v.verdict.status === "tampered" ? v.verdict.reason.code : undefined;
  return reason === "torn_final_line" || reason === "malformed_line";
}

/**
 * The calls of ended Sessions that never finished (SPEC §13.4), in one line for stderr, or
 * undefined when there are none: `aegis verify` keeps stdout the reference's, and says this
 * beside it.
 */
export function describeUnfinishedCalls(u: UnfinishedCalls): string | undefined {
  const summary = summarizeUnfinishedCalls(u);
  return summary === undefined ? undefined : `${summary}; \`aegis show\` lists ${u.count === 1 ? "it" : "them"}`;
}

/**
 * `JSON.stringify(doc, null, indent)` in parts: the lists of calls in flight (`in_flight`,
 * and the reason's own; a million call ids in a hostile file) are written a thousand
 * entries at a time instead of inside one huge string. `doc` is a verify document, or one
 * that holds it as `verification` (`show`).
 */
export function* verifyJsonParts(doc: Record<string, unknown>, indent: 0 | 2): Generator<string> {
  const lists: (readonly unknown[])[] = [];
  const mark = (calls: unknown): unknown => {
    if (!Array.isArray(calls) || calls.length === 0) return calls;
    lists.push(calls);
    return `\u0000list ${lists.length - 1}\u0000`;
  };
  const markVerify = (v: Record<string, unknown>): Record<string, unknown> => {
    const reason = v["reason"];
    return {
      ...v,
      ...(typeof reason === "object" && reason !== null && "in_flight" in reason ? { reason: { ...reason, in_flight: mark(reason.in_flight) } } : {}),
      ...("in_flight" in v ? { in_flight: mark(v["in_flight"]) } : {}),
    };
  };
  const inner = doc["verification"];
  const marked = typeof inner === "object" && inner !== null ? { ...doc, verification: markVerify(inner as Record<string, unknown>) } : markVerify(doc);
  const text = indent === 0 ? JSON.stringify(marked) : JSON.stringify(marked, null, indent);
  const pieces = text.split(/"\\u0000list (\d+)\\u0000"/);
  for (const [i, piece] of pieces.entries()) {
    if (i % 2 === 0) {
      yield piece;
      continue;
    }
    // Where the marker stood: its line's indentation is the list's closing bracket's.
    const before = pieces[i - 1] ?? "";
    const pad = indent === 0 ? "" : (/\n( *)[^\n]*$/.exec(before)?.[1] ?? "");
    const calls = lists[Number(piece)] ?? [];
    yield "[";
    for (let from = 0; from < calls.length; from += 1000)
      yield calls
        .slice(from, from + 1000)
        .map((call, j) => `${from + j === 0 ? "" : ","}${indent === 0 ? "" : `\n${pad}  `}${JSON.stringify(call)}`)
        .join("");
    yield indent === 0 ? "]" : `\n${pad}]`;
  }
}
