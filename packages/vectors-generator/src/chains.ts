import { KeyId, ToolSpecDigest } from "@aegis/format";
import type { VectorSet } from "./vector-set.js";
import { trustAndCapCases } from "./chains-trust-caps.js";
import { DEV_PUBLIC, IDENTITY, NOT_A_POINT, ROTATED, ROTATED_PUBLIC, baseSession, chainAnswerOf, steadyClock, chainKit, type ChainCase } from "./chain-kit.js";

/**
 * SPEC §4-§8: record files written by the real writer with fixed keys, then altered in
 * exactly one way (or, for precedence, in two named ways).
 */
export async function chainVectors(set: VectorSet): Promise<void> {
  const kit = chainKit(await baseSession());
  const { base, lines, rows, seal, withRow, parsed, renumber, edit, insertAt, close, twoSessions, again, rotatedSecond, chainCase } = kit;
  const c = chainCase;
  const cases: readonly ChainCase[] = [
    // Whole files.
    c("verified_unpinned", "positive", ["8.6"], "A closed Session: open, two calls, a park and its decision, close.", base),
    c("verified_pinned", "positive", ["8.4"], "The same Session with its public key in the trust set.", base, [DEV_PUBLIC]),
    c("verified_pinned_among_others", "positive", ["8.4"], "The trust set holds the Session's key and an unrelated one.", base, [ROTATED_PUBLIC, DEV_PUBLIC]),
    c("verified_two_sessions", "positive", ["7"], "A second Session appended; its open carries prev_session_tail.", seal(twoSessions)),
    c(
      "verified_rotated_unpinned",
      "positive",
      ["7", "8.4"],
      "The second Session is signed by another key; no trust set.",
      seal(twoSessions, { signWith: rotatedSecond }),
    ),
    c(
      "verified_rotated_pinned",
      "positive",
      ["7", "8.4"],
      "The second Session is signed by another key; both keys are trusted.",
      seal(twoSessions, { signWith: rotatedSecond }),
      [DEV_PUBLIC, ROTATED_PUBLIC],
    ),
    c(
      "verified_unknown_member",
      "positive",
      ["5.1"],
      "An outcome with a member this version does not define: ignored, hashed.",
      seal(edit(2, (l) => ({ ...l, x_newer_member: { nested: [1, 2] } }))),
    ),
    c(
      "verified_tool_spec_digest",
      "positive",
      ["5.3", "17.6"],
      "An outcome carrying the aegis-ts extension member tool_spec_digest, as aegis wrap writes it: signed and hashed like any member.",
      seal(edit(2, (l) => ({ ...l, tool_spec_digest: ToolSpecDigest.of('{"name":"fs.read"}') }))),
    ),
    c(
      "verified_confinement",
      "positive",
      ["5.3", "17.11"],
      "An open carrying the aegis-ts extension member confinement (what aegis wrap --confine held the server to): signed and hashed like any member.",
      seal(
        edit(0, (l) => ({
          ...l,
          confinement: {
            mechanism: "bubblewrap",
            version: "0.8.0",
            read: ["/srv/data", "/srv/mcp-server"],
            write: ["/srv/data"],
            net: ["127.0.0.1:8080"],
            exec_support: true,
            best_effort: false,
            not_enforced: [],
          },
        })),
      ),
    ),
    c(
      "verified_envelope_access",
      "positive",
      ["5.3", "14.11"],
      "A call whose intent and outcome carry the aegis-ts extension member envelope_access of an access record (which digest, why, who): hashed, and on the outcome signed, like any member.",
      seal(
        lines.map((l, j) =>
          j === 1 || j === 2
            ? {
                ...l,
                tool_id: "aegis.envelope.get",
                envelope_access: {
                  digest: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
                  os_user: "operator",
                  reader_key_id: KeyId.of(Buffer.from(DEV_PUBLIC, "hex")),
                  reason: "INC-2231: what did the call send?",
                },
              }
            : l,
        ),
      ),
    ),
    c(
      "verified_continues_call",
      "positive",
      ["5.3", "17.2"],
      "An outcome carrying the aegis-ts extension member continues_call (a round of an MCP 2026-07-28 tools/call that asked for input, linked to the round before), as aegis wrap writes it: signed and hashed like any member.",
      seal(edit(2, (l) => ({ ...l, continues_call: "call-0" }))),
    ),
    c(
      "verified_time_member",
      "positive",
      ["5.1", "12", "13.7"],
      "The base Session as the aegis-ts writer writes it by default: every Line carries the aegis-ts extension member time (RFC 3339, UTC, milliseconds), signed and hashed like any member.",
      await baseSession(steadyClock()),
    ),
    c("verified_blank_rows", "positive", ["1.1"], "Blank rows between Lines are skipped.", base.replace("\n", "\n\n  \n")),
    c("verified_no_final_newline", "positive", ["1.1"], "The last Line without its final newline is whole.", base.trimEnd()),
    c("verified_open_only", "positive", ["7"], "A Session that opened and closed with no calls.", seal([lines[0] ?? {}, { ...close, seq: 1 }])),
    c(
      "verified_unfinished_call_earlier_session",
      "positive",
      ["7", "13.4"],
      "A writer killed after call-1's intent, which call-0's signed outcome then covered; a second Session appended and closed. Verified, and unfinished_calls counts call-1 of Session 0.",
      seal([...renumber([lines[0] ?? {}, lines[1] ?? {}, lines[3] ?? {}, lines[2] ?? {}]), ...again]),
    ),
    c(
      "verified_unfinished_call_closed_session",
      "positive",
      ["10", "13.4"],
      "A closed Session in which call-1's intent has no outcome: Verified (SPEC §10), and the Session has ended, so unfinished_calls counts it.",
      seal(renumber([lines[0] ?? {}, lines[1] ?? {}, lines[3] ?? {}, lines[2] ?? {}, close])),
    ),
    // Tampered: one alteration each.
    c(
      "chain_broken",
      "negative",
      ["4", "8.3"],
      "Line 4's prev_hash replaced by 64 'f' and the line re-signed.",
      seal(
        edit(3, (l) => ({ ...l, prev_hash: "f".repeat(64) })),
        { chain: false },
      ),
    ),
    c(
      "chain_broken_intent",
      "negative",
      ["4", "8.3"],
      "An (unsigned) intent's prev_hash replaced by 64 '0'.",
      seal(
        edit(1, (l) => ({ ...l, prev_hash: "0".repeat(64) })),
        { chain: false },
      ),
    ),
    c(
      "chain_broken_edited_unsigned_intent",
      "negative",
      ["4", "8.3"],
      "An intent's tool_id edited in place: its successor's prev_hash no longer names it.",
      withRow(1, (rows[1] ?? "").replace('"tool_id":"fs.read"', '"tool_id":"fs.rm"')),
    ),
    c("seq_out_of_order", "negative", ["8.3"], "Line 5 carries seq 2; chain and signatures intact.", seal(edit(4, (l) => ({ ...l, seq: 2 })))),
    c("seq_repeated", "negative", ["8.3"], "Line 5 repeats seq 3.", seal(edit(4, (l) => ({ ...l, seq: 3 })))),
    c("open_not_at_seq_0", "negative", ["7", "8.3"], "The open carries seq 1.", seal(edit(0, (l) => ({ ...l, seq: 1 })))),
    c(
      "bad_signature_unsigned",
      "negative",
      ["5.1", "8.3"],
      "Line 3, an outcome, carries no signature (stripped by its emitter).",
      seal(lines, { unsigned: [2] }),
    ),
    c("bad_signature_unsigned_close", "negative", ["5.1", "8.3"], "The close carries no signature.", seal(lines, { unsigned: [lines.length - 1] })),
    c(
      "bad_signature_altered",
      "negative",
      ["8.3", "8.5"],
      "One hex digit of line 3's signature changed.",
      withRow(
        2,
        (rows[2] ?? "").replace(/"signature":"(.)/, (_, ch: string) => `"signature":"${ch === "0" ? "1" : "0"}`),
      ),
    ),
    c(
      "bad_signature_member_edited",
      "negative",
      ["8.3", "8.5"],
      "Line 3's decision_axes.role edited after signing.",
      withRow(2, (rows[2] ?? "").replace('"role":"ops"', '"role":"root"')),
    ),
    c(
      "bad_signature_key_mismatch",
      "negative",
      ["8.3", "8.4"],
      "Line 3 is signed by a key the Session did not publish.",
      seal(lines, { signWith: new Map([[2, ROTATED]]) }),
    ),
    c(
      "bad_signature_uppercase_hex",
      "negative",
      ["2", "8.3"],
      "Line 3's signature in upper-case hex.",
      withRow(
        2,
        (rows[2] ?? "").replace(/"signature":"([0-9a-f]+)"/, (_, sig: string) => `"signature":"${sig.toUpperCase()}"`),
      ),
    ),
    c(
      "bad_signature_short",
      "negative",
      ["2", "8.3"],
      "Line 3's signature cut to 126 hex digits.",
      withRow(
        2,
        (rows[2] ?? "").replace(/"signature":"([0-9a-f]+)"/, (_, sig: string) => `"signature":"${sig.slice(0, 126)}"`),
      ),
    ),
    c(
      "bad_signature_small_order_public_key",
      "negative",
      ["8.3", "8.5"],
      "The open publishes the identity point (small order) as its key, with its key_id.",
      withRow(
        0,
        (rows[0] ?? "")
          .replace(/"key_id":"[0-9a-f]+"/, `"key_id":"${KeyId.of(IDENTITY)}"`)
          .replace(/"public_key":"[0-9a-f]+"/, `"public_key":"${Buffer.from(IDENTITY).toString("hex")}"`),
      ),
    ),
    c(
      "bad_signature_key_not_a_point",
      "negative",
      ["8.3", "8.4"],
      "The open publishes 32 bytes that decode to no curve point, with their key_id.",
      withRow(
        0,
        (rows[0] ?? "")
          .replace(/"key_id":"[0-9a-f]+"/, `"key_id":"${KeyId.of(NOT_A_POINT)}"`)
          .replace(/"public_key":"[0-9a-f]+"/, `"public_key":"${Buffer.from(NOT_A_POINT).toString("hex")}"`),
      ),
    ),
    c(
      "session_boundary_broken",
      "negative",
      ["7", "8.3"],
      "Two Sessions; the last line of the first removed.",
      seal(twoSessions)
        .split("\n")
        .filter((_, i) => i !== lines.length - 1)
        .join("\n"),
    ),
    c(
      "session_boundary_wrong_tail",
      "negative",
      ["7", "8.3"],
      "The second open's prev_session_tail names the wrong Line (re-signed).",
      seal(
        parsed(seal(twoSessions)).map((l, i) => (i === lines.length ? { ...l, prev_session_tail: "a".repeat(64) } : l)),
        { chain: false },
      ),
    ),
    c("malformed_line_not_json", "negative", ["3.3", "8.3"], "Line 3 is not JSON and is not the last line.", withRow(2, "{not json")),
    c(
      "malformed_line_float",
      "negative",
      ["3.2", "8.3"],
      "Line 3 holds a float, outside the value space.",
      withRow(2, (rows[2] ?? "").replace('"seq":2', '"seq":2.0')),
    ),
    c(
      "malformed_line_final_float",
      "negative",
      ["3.2", "8.2", "8.3", "13.2"],
      "The last line, the close, holds a float: it parses, so it is no torn write, and has no canonical form: Tampered, though it is the last line (aegis repair refuses to cut it).",
      withRow(rows.length - 2, (rows.at(-2) ?? "").replace(/"seq":(\d+)/, '"seq":$1.0')),
    ),
    c(
      "malformed_line_null",
      "negative",
      ["3.2", "8.3"],
      "Line 3 holds a null.",
      withRow(2, (rows[2] ?? "").replace('"grant_id"', '"x":null,"grant_id"').replace('{"call_id"', '{"a":null,"call_id"')),
    ),
    c(
      "malformed_line_negative",
      "negative",
      ["3.2", "8.3"],
      "Line 3 holds a negative integer.",
      withRow(2, (rows[2] ?? "").replace('{"call_id"', '{"a":-1,"call_id"')),
    ),
    c(
      "malformed_line_two_pow_53",
      "negative",
      ["3.2", "8.3"],
      "Line 3 holds 2^53.",
      withRow(2, (rows[2] ?? "").replace('{"call_id"', '{"a":9007199254740992,"call_id"')),
    ),
    c("malformed_line_array", "negative", ["3.3", "8.3"], "Line 3 is a JSON array, not an object.", withRow(2, "[1,2,3]")),
    c(
      "malformed_line_not_utf8",
      "negative",
      ["1.1", "8.3"],
      "Line 3 holds a byte that is not UTF-8.",
      Buffer.concat([Buffer.from(rows.slice(0, 2).join("\n") + "\n"), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from(rows.slice(3).join("\n"))]),
    ),
    c(
      "malformed_line_missing_seq",
      "negative",
      ["5.1", "8.3"],
      "Line 3 has no seq member.",
      seal(
        edit(2, (l) => {
          const { seq: _seq, ...rest } = l;
          void _seq;
          return rest;
        }),
      ),
    ),
    c("malformed_line_seq_string", "negative", ["5.1", "8.3"], "Line 3's seq is a string.", seal(edit(2, (l) => ({ ...l, seq: "2" })))),
    c(
      "verified_schema_version_not_judged",
      "positive",
      ["5.1", "12"],
      "Line 3 claims schema_version 3: a verifier does not judge the value (the reference does not).",
      seal(edit(2, (l) => ({ ...l, schema_version: 3 }))),
    ),
    c(
      "malformed_line_schema_version_1",
      "negative",
      ["5.1", "8.3", "12"],
      "A version-1 `phase` line in a version-2 file.",
      seal(insertAt(3, { schema_version: 1, phase: "outcome", call_id: "legacy" })),
    ),
    c(
      "malformed_line_uppercase_prev_hash",
      "negative",
      ["2", "8.3"],
      "Line 3's prev_hash in upper-case hex.",
      withRow(
        2,
        (rows[2] ?? "").replace(/"prev_hash":"([0-9a-f]+)"/, (_, h: string) => `"prev_hash":"${h.toUpperCase()}"`),
      ),
    ),
    c(
      "verified_crlf_rows",
      "positive",
      ["1.1"],
      "Rows end in CRLF: a row is trimmed of white space, so the carriage return is not part of the Line.",
      base.replaceAll("\n", "\r\n"),
    ),
    ...trustAndCapCases(kit),
  ];

  for (const v of cases) {
    const path = set.file(`chains/${v.name}.aarl`, v.bytes);
    const trust = v.trust ?? null;
    const expected = await chainAnswerOf(v.bytes, trust);
    if ((expected.verdict === "verified") !== (v.polarity === "positive")) throw new Error(`chains/${v.name}: ${v.polarity} case answered ${expected.verdict}`);
    const topic = expected.reason === null ? "verified" : String(expected.reason["code"]);
    set.add({
      id: `chains/${v.name}`,
      kind: "chain",
      description: v.description,
      spec: v.spec,
      flags: [v.polarity, "chain", topic],
      input: { record: path, trust },
      expected,
    });
  }
}
