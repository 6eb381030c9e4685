import { describe, expect, it } from "vitest";
import { type JsonObject } from "../src/index.js";
import { isLineTime, parseJson, readLineBody, readTypedLine } from "../src/internal.js";

/**
 * Reading a Line as its type (SPEC §5.3), as `aegis show` and recheck do: every member the
 * type defines is kept and nothing else, and a Line that does not fit is reported with every
 * bad path at once, each as `<path>: expected <what>`, the text `aegis show` prints.
 */
const H = (c: string): string => c.repeat(64);
const SIG = "5".repeat(128);
const header = { schema_version: 2, seq: 3, prev_hash: H("a") };
const signed = { key_id: H("1"), signature: SIG };
/** SPEC §14.11: the read of Envelope bytes an access record is, on its intent and outcome. */
const ACCESS = { digest: H("7"), reason: "INC-1: what was sent", os_user: "operator", reader_key_id: H("8") };

/** A Line parsed as the verifier parses it (so numbers outside the value space are as a row holds them). */
function line(value: Record<string, unknown>): JsonObject {
  return parseJson(JSON.stringify(value)) as JsonObject;
}

function problems(value: Record<string, unknown>): readonly string[] {
  const read = readTypedLine(line(value));
  return read.ok ? [] : read.problems;
}

const OUTCOME = {
  ...header,
  ...signed,
  line_type: "outcome",
  time: "2026-03-01T12:00:00.000Z",
  call_id: "call-1",
  tool_id: "fs.read",
  request_digest: H("b"),
  policy_set_hash: H("c"),
  grant_id: "g-1",
  response_digest: H("d"),
  wall_ms: 12,
  peak_memory_bytes: 4096,
  tool_spec_digest: H("e"),
  envelope_access: ACCESS,
  continues_call: "call-0",
  policy: { status: "allowed" },
  capability: {
    status: "granted",
    grant: {
      grant_id: "g-1",
      tool_id: "fs.read",
      fs: { read_paths: ["/srv"], write_paths: [] },
      net: { http: [{ host: "example.org", ports: [443], methods: ["GET"] }] },
      max_memory_bytes: 1,
      max_wall_ms: 2,
      max_output_bytes: 3,
    },
  },
  execution: { status: "success" },
  decision_axes: {
    capability: "fs.read",
    role: "ops",
    session: "s",
    matched_rule: "r",
    approval_ref: "apr",
    fs: { path_raw: "./a", path_canonical: "/srv/a" },
    net: { host: "example.org", port: 443 },
  },
};

describe("[M5.3] every type read whole, unknown members dropped", () => {
  it("an outcome with every member", () => {
    expect(readTypedLine(line({ ...OUTCOME, extra: 1 }))).toEqual({ ok: true, value: { line_type: "outcome", line: OUTCOME } });
  });

  it("an outcome with only the members it must have", () => {
    const minimal = { ...OUTCOME, capability: { status: "denied", reason: "no" }, decision_axes: {} } as Record<string, unknown>;
    const optional = ["time", "grant_id", "response_digest", "wall_ms", "peak_memory_bytes", "tool_spec_digest", "envelope_access", "continues_call"];
    for (const key of optional) delete minimal[key];
    const read = readTypedLine(line(minimal));
    expect(read).toEqual({ ok: true, value: { line_type: "outcome", line: minimal } });
    // Absent, not present as undefined: `show --json` and a re-emitted Line hold the same members.
    expect(read.ok && Object.keys(read.value.line).sort()).toEqual(Object.keys(minimal).sort());
    expect(read.ok && read.value.line_type === "outcome" && Object.keys(read.value.line.decision_axes)).toEqual([]);
  });

  it("each policy, capability and execution outcome", () => {
    const policies = [
      { status: "allowed" },
      { status: "denied", reason: "r" },
      { status: "rate_limited", reason: "slow" },
      { status: "pending_approval", approval_id: "a" },
    ];
    const capabilities = [
      { status: "denied", reason: "r" },
      { status: "denied", reason: "r", denied_capability: "net" },
      { status: "granted", grant: { grant_id: "g", tool_id: "t", max_memory_bytes: 0, max_wall_ms: 0, max_output_bytes: 0 } },
    ];
    const executions = [
      { status: "success" },
      { status: "trap", message: "m" },
      { status: "resource_exceeded", kind: "memory" },
      { status: "host_denied", reason: "r" },
    ];
    for (const policy of policies)
      expect(readTypedLine(line({ ...OUTCOME, policy, extra: { x: 1 } }))).toEqual({ ok: true, value: { line_type: "outcome", line: { ...OUTCOME, policy } } });
    for (const capability of capabilities)
      expect(readTypedLine(line({ ...OUTCOME, capability }))).toEqual({ ok: true, value: { line_type: "outcome", line: { ...OUTCOME, capability } } });
    for (const execution of executions)
      expect(readTypedLine(line({ ...OUTCOME, execution }))).toEqual({ ok: true, value: { line_type: "outcome", line: { ...OUTCOME, execution } } });
    // A member a variant does not define is not kept.
    expect(readTypedLine(line({ ...OUTCOME, policy: { status: "allowed", reason: "x" }, execution: { status: "success", message: "x" } }))).toEqual({
      ok: true,
      value: { line_type: "outcome", line: OUTCOME },
    });
  });

  it("open, intent, decision and close", () => {
    const open = { ...header, ...signed, line_type: "open", public_key: H("f"), prev_session_tail: H("9") };
    expect(readTypedLine(line({ ...open, note: "x" }))).toEqual({ ok: true, value: { line_type: "open", line: open } });
    const intent = { ...header, line_type: "intent", call_id: "c", tool_id: "t", request_digest: H("b") };
    expect(readTypedLine(line({ ...intent, signature: "x" }))).toEqual({ ok: true, value: { line_type: "intent", line: intent } });
    const access = { ...intent, envelope_access: ACCESS };
    expect(readTypedLine(line({ ...access, envelope_access: { ...ACCESS, extra: 1 } }))).toEqual({ ok: true, value: { line_type: "intent", line: access } });
    const approved = {
      ...header,
      ...signed,
      line_type: "decision",
      approval_id: "a",
      verdict: { verdict: "approved", scope: { tool_id: "t", fs: { read_paths: [], write_paths: ["/w"] }, net: { http: [] } } },
    };
    expect(readTypedLine(line(approved))).toEqual({ ok: true, value: { line_type: "decision", line: approved } });
    const bare = { ...approved, verdict: { verdict: "approved", scope: { tool_id: "t" } } };
    expect(readTypedLine(line(bare))).toEqual({ ok: true, value: { line_type: "decision", line: bare } });
    const denied = { ...approved, verdict: { verdict: "denied", reason: "no" } };
    expect(readTypedLine(line(denied))).toEqual({ ok: true, value: { line_type: "decision", line: denied } });
    const close = { ...header, ...signed, line_type: "close" };
    expect(readTypedLine(line({ ...close, x: [] }))).toEqual({ ok: true, value: { line_type: "close", line: close } });
  });

  it("an open's confinement (SPEC §17.11), each of its members kept", () => {
    const held = {
      mechanism: "bubblewrap",
      version: "0.11.0",
      read: ["/usr"],
      write: ["/work"],
      net: ["api.example.com:443"],
      exec_support: true,
      best_effort: false,
      not_enforced: [],
    };
    const open = { ...header, ...signed, line_type: "open", public_key: H("f"), confinement: held };
    expect(readTypedLine(line({ ...open, confinement: { ...held, extra: 1 } }))).toEqual({ ok: true, value: { line_type: "open", line: open } });
    const none = {
      mechanism: "none",
      version: "",
      read: [],
      write: [],
      net: [],
      exec_support: false,
      best_effort: true,
      not_enforced: ["read", "write", "net"],
    };
    expect(readTypedLine(line({ ...open, confinement: none }))).toEqual({ ok: true, value: { line_type: "open", line: { ...open, confinement: none } } });
  });

  it("a checkpoint and a newer type are kept whole, the token with them", () => {
    const checkpoint = line({ ...header, line_type: "checkpoint", anything: [1] });
    expect(readTypedLine(checkpoint)).toEqual({ ok: true, value: { line_type: "checkpoint", line: checkpoint } });
    const newer = line({ ...header, line_type: "attestation", anything: { a: 1 } });
    expect(readTypedLine(newer)).toEqual({ ok: true, value: { line_type: "unknown", token: "attestation", line: newer } });
  });

  it("readLineBody neither demands nor keeps key_id and signature", () => {
    const close = { ...header, line_type: "close" };
    expect(readLineBody(line(close))).toEqual({ ok: true, value: { line_type: "close", line: close } });
    expect(readLineBody(line({ ...close, ...signed }))).toEqual({ ok: true, value: { line_type: "close", line: close } });
    expect(problems(close)).toEqual(["$.key_id: expected 64 lowercase hex", "$.signature: expected 128 lowercase hex"]);
  });
});

describe("[M5.3] every member that does not fit, each with its path", () => {
  it("the header", () => {
    expect(problems({ line_type: 3 })).toEqual(["$.line_type: expected a string"]);
    expect(problems({ line_type: "close", ...signed })).toEqual([
      "$.schema_version: expected 2",
      "$.seq: expected an integer (missing)",
      "$.prev_hash: expected 64 lowercase hex",
    ]);
    expect(problems({ ...header, ...signed, line_type: "close", schema_version: 1, seq: -1, prev_hash: H("A"), time: "2026-03-01" })).toEqual([
      "$.schema_version: expected 2",
      "$.time: expected a time as YYYY-MM-DDTHH:MM:SS.sssZ",
      "$.seq: expected a non-negative integer",
      "$.prev_hash: expected 64 lowercase hex",
    ]);
    expect(problems({ ...header, ...signed, line_type: "close", seq: 1.5, time: 5 })).toEqual([
      "$.time: expected a time as YYYY-MM-DDTHH:MM:SS.sssZ",
      "$.seq: expected a non-negative integer",
    ]);
    // A time is a string: not an array whose one element would spell one.
    expect(problems({ ...header, ...signed, line_type: "close", time: ["2026-03-01T12:00:00.000Z"] })).toEqual([
      "$.time: expected a time as YYYY-MM-DDTHH:MM:SS.sssZ",
    ]);
    expect(problems({ ...header, line_type: "close", key_id: 7, signature: "ab" })).toEqual([
      "$.key_id: expected 64 lowercase hex",
      "$.signature: expected 128 lowercase hex",
    ]);
  });

  it("a Line built in JavaScript rather than parsed is held to the same integers", () => {
    // parseJson gives a negative, fractional or unsafe number as an OutOfSpaceNumber; a caller's
    // own object holds them as numbers, and each is refused all the same.
    const close = { ...header, ...signed, line_type: "close" };
    expect(readTypedLine({ ...close, seq: -1 })).toEqual({ ok: false, problems: ["$.seq: expected a non-negative integer"] });
    expect(readTypedLine({ ...close, seq: 1.5 })).toEqual({ ok: false, problems: ["$.seq: expected a non-negative integer"] });
    expect(readTypedLine({ ...close, seq: 2 ** 53 })).toEqual({ ok: false, problems: ["$.seq: expected a non-negative integer"] });
  });

  it("an open and an intent", () => {
    expect(problems({ ...header, ...signed, line_type: "open", prev_session_tail: "x" })).toEqual([
      "$.public_key: expected 64 lowercase hex",
      "$.prev_session_tail: expected 64 lowercase hex",
    ]);
    expect(problems({ ...header, line_type: "intent", call_id: 1, request_digest: H("B") })).toEqual([
      "$.call_id: expected a string",
      "$.tool_id: expected a string (missing)",
      "$.request_digest: expected 64 lowercase hex",
    ]);
    const intent = { ...header, line_type: "intent", call_id: "c", tool_id: "t", request_digest: H("b") };
    expect(problems({ ...intent, envelope_access: { digest: "ABC", reason: 7, reader_key_id: H("F") } })).toEqual([
      "$.envelope_access.digest: expected 64 lowercase hex",
      "$.envelope_access.reason: expected a string",
      "$.envelope_access.os_user: expected a string (missing)",
      "$.envelope_access.reader_key_id: expected 64 lowercase hex",
    ]);
    expect(problems({ ...intent, envelope_access: [] })).toEqual(["$.envelope_access: expected an object"]);
  });

  it("an open's confinement", () => {
    const open = { ...header, ...signed, line_type: "open", public_key: H("f") };
    const confinement = { mechanism: "landlock", version: 1, read: "/usr", write: [1], net: null, exec_support: "yes", not_enforced: ["read", "disk"] };
    expect(problems({ ...open, confinement })).toEqual([
      "$.confinement.not_enforced: expected an array of read, write, net",
      "$.confinement.mechanism: expected one of bubblewrap, none",
      "$.confinement.version: expected a string",
      "$.confinement.read: expected an array of strings",
      "$.confinement.write: expected an array of strings",
      "$.confinement.net: expected an array of strings",
      "$.confinement.exec_support: expected a boolean",
      "$.confinement.best_effort: expected a boolean (missing)",
    ]);
    expect(problems({ ...open, confinement: [] })).toEqual(["$.confinement: expected an object"]);
  });

  it("an outcome's members, nested ones by their whole path", () => {
    expect(problems({ ...header, ...signed, line_type: "outcome" })).toEqual([
      "$.policy: expected an object (missing)",
      "$.capability: expected an object (missing)",
      "$.execution: expected an object (missing)",
      "$.decision_axes: expected an object (missing)",
      "$.call_id: expected a string (missing)",
      "$.tool_id: expected a string (missing)",
      "$.request_digest: expected 64 lowercase hex",
      "$.policy_set_hash: expected 64 lowercase hex",
    ]);
    expect(
      problems({
        ...OUTCOME,
        grant_id: 1,
        response_digest: "",
        wall_ms: -1,
        peak_memory_bytes: "1",
        tool_spec_digest: 0,
        envelope_access: { ...ACCESS, os_user: null },
        continues_call: 1,
        policy: { status: "denied" },
        capability: [],
        execution: { status: "crashed" },
        decision_axes: { role: 1, fs: { path_raw: "a" }, net: { host: "h", port: 1.5 } },
      }),
    ).toEqual([
      "$.policy.reason: expected a string (missing)",
      "$.capability: expected an object",
      "$.execution.status: expected one of success, trap, resource_exceeded, host_denied",
      "$.decision_axes.role: expected a string",
      "$.decision_axes.fs.path_canonical: expected a string (missing)",
      "$.decision_axes.net.port: expected a non-negative integer",
      "$.grant_id: expected a string",
      "$.response_digest: expected 64 lowercase hex",
      "$.wall_ms: expected a non-negative integer",
      "$.peak_memory_bytes: expected a non-negative integer",
      "$.tool_spec_digest: expected 64 lowercase hex",
      "$.envelope_access.os_user: expected a string",
      "$.continues_call: expected a string",
    ]);
  });

  it("each variant's own members", () => {
    const bad = (member: string, value: unknown): readonly string[] => problems({ ...OUTCOME, [member]: value });
    expect(bad("policy", { status: "rate_limited" })).toEqual(["$.policy.reason: expected a string (missing)"]);
    expect(bad("policy", { status: "pending_approval" })).toEqual(["$.policy.approval_id: expected a string (missing)"]);
    expect(bad("policy", { status: 1 })).toEqual(["$.policy.status: expected one of allowed, denied, rate_limited, pending_approval"]);
    expect(bad("capability", { status: "granted" })).toEqual(["$.capability.grant: expected an object (missing)"]);
    expect(bad("capability", { status: "denied", denied_capability: 1 })).toEqual([
      "$.capability.reason: expected a string (missing)",
      "$.capability.denied_capability: expected a string",
    ]);
    expect(bad("capability", { status: "revoked" })).toEqual(["$.capability.status: expected one of granted, denied"]);
    expect(bad("execution", { status: "trap" })).toEqual(["$.execution.message: expected a string (missing)"]);
    expect(bad("execution", { status: "resource_exceeded" })).toEqual(["$.execution.kind: expected a string (missing)"]);
    expect(bad("execution", { status: "host_denied" })).toEqual(["$.execution.reason: expected a string (missing)"]);
    // The two nested axes are checked to be objects before any member is read.
    expect(bad("decision_axes", { capability: 1, session: 2, matched_rule: 3, approval_ref: 4, fs: 5, net: {} })).toEqual([
      "$.decision_axes.fs: expected an object",
      "$.decision_axes.capability: expected a string",
      "$.decision_axes.session: expected a string",
      "$.decision_axes.matched_rule: expected a string",
      "$.decision_axes.approval_ref: expected a string",
      "$.decision_axes.net.host: expected a string (missing)",
      "$.decision_axes.net.port: expected an integer (missing)",
    ]);
    expect(bad("decision_axes", { fs: { path_canonical: "/a" }, net: [] })).toEqual([
      "$.decision_axes.net: expected an object",
      "$.decision_axes.fs.path_raw: expected a string (missing)",
    ]);
  });

  it("a grant, its file and network parts", () => {
    const grant = (value: unknown): readonly string[] => problems({ ...OUTCOME, capability: { status: "granted", grant: value } });
    expect(grant({ fs: {}, net: { http: {} } })).toEqual([
      "$.capability.grant.grant_id: expected a string (missing)",
      "$.capability.grant.tool_id: expected a string (missing)",
      "$.capability.grant.fs.read_paths: expected an array of strings",
      "$.capability.grant.fs.write_paths: expected an array of strings",
      "$.capability.grant.net.http: expected an array",
      "$.capability.grant.max_memory_bytes: expected an integer (missing)",
      "$.capability.grant.max_wall_ms: expected an integer (missing)",
      "$.capability.grant.max_output_bytes: expected an integer (missing)",
    ]);
    const valid = OUTCOME.capability.grant;
    expect(grant({ ...valid, fs: { read_paths: [1], write_paths: "w" }, net: 7 })).toEqual([
      "$.capability.grant.fs.read_paths: expected an array of strings",
      "$.capability.grant.fs.write_paths: expected an array of strings",
      "$.capability.grant.net: expected an object",
    ]);
    expect(grant({ ...valid, net: { http: [{ host: "h", ports: [443], methods: ["GET"] }, 3, { host: 1, ports: ["443"], methods: [1] }] } })).toEqual([
      "$.capability.grant.net.http[1]: expected an object",
      "$.capability.grant.net.http[2].host: expected a string",
      "$.capability.grant.net.http[2].ports: expected an array of integers",
      "$.capability.grant.net.http[2].methods: expected an array of strings",
    ]);
    expect(grant({ ...valid, net: { http: [{ host: "h", ports: [443, "80"], methods: ["GET", 1] }] } })).toEqual([
      "$.capability.grant.net.http[0].ports: expected an array of integers",
      "$.capability.grant.net.http[0].methods: expected an array of strings",
    ]);
    expect(grant({ ...valid, net: { http: [{ host: "h", ports: 443, methods: "GET" }] } })).toEqual([
      "$.capability.grant.net.http[0].ports: expected an array of integers",
      "$.capability.grant.net.http[0].methods: expected an array of strings",
    ]);
  });

  it("a decision and its verdict", () => {
    const decision = { ...header, ...signed, line_type: "decision" };
    expect(problems(decision)).toEqual(["$.verdict: expected an object (missing)", "$.approval_id: expected a string (missing)"]);
    expect(problems({ ...decision, approval_id: "a", verdict: { verdict: "maybe" } })).toEqual(["$.verdict.verdict: expected one of approved, denied"]);
    expect(problems({ ...decision, approval_id: "a", verdict: { verdict: "denied" } })).toEqual(["$.verdict.reason: expected a string (missing)"]);
    expect(problems({ ...decision, approval_id: "a", verdict: { verdict: "approved" } })).toEqual(["$.verdict.scope: expected an object (missing)"]);
    expect(problems({ ...decision, approval_id: "a", verdict: { verdict: "approved", scope: { fs: [], net: { http: [1] } } } })).toEqual([
      "$.verdict.scope.tool_id: expected a string (missing)",
      "$.verdict.scope.fs: expected an object",
      "$.verdict.scope.net.http[0]: expected an object",
    ]);
  });
});

describe("SPEC §13.7: a Line's time is the writer's spelling of a real instant", () => {
  it.each([
    ["2026-03-01T12:00:00.000Z", true],
    ["2024-02-29T00:00:00.000Z", true],
    ["2000-02-29T23:59:59.999Z", true],
    ["2023-02-29T00:00:00.000Z", false],
    ["2100-02-29T00:00:00.000Z", false],
    ["2023-02-28T00:00:00.000Z", true],
    ["2026-01-31T00:00:00.000Z", true],
    ["2026-03-31T00:00:00.000Z", true],
    ["2026-04-30T00:00:00.000Z", true],
    ["2026-04-31T00:00:00.000Z", false],
    ["2026-06-31T00:00:00.000Z", false],
    ["2026-09-31T00:00:00.000Z", false],
    ["2026-11-31T00:00:00.000Z", false],
    ["2026-12-31T00:00:00.000Z", true],
    ["2026-13-01T00:00:00.000Z", false],
    ["2026-00-01T00:00:00.000Z", false],
    ["2026-01-00T00:00:00.000Z", false],
    ["2026-01-32T00:00:00.000Z", false],
    ["2026-01-01T24:00:00.000Z", false],
    ["2026-01-01T00:60:00.000Z", false],
    ["2026-01-01T00:00:60.000Z", false],
    ["2026-01-01T00:00:00Z", false],
    ["2026-01-01T00:00:00.000z", false],
    ["2026-01-01T00:00:00.000+00:00", false],
    [" 2026-01-01T00:00:00.000Z", false],
    ["2026-01-01T00:00:00.000Z ", false],
  ])("%s: %s", (text, valid) => {
    expect(isLineTime(text)).toBe(valid);
  });
});
