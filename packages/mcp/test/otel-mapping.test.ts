import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, PolicySetHash, type CallResult, verifyRecord } from "@aegis/format";
import { RecordFollower, type CallRecord } from "../src/otel/follow.js";
import { SpanPlanner } from "../src/otel/spans.js";
import { requestFacts, responseFacts } from "../src/otel/facts.js";
import { callSpanId, parseTraceparent, sessionSpanId } from "../src/otel/ids.js";
import { KEY, tempDir } from "./support.js";

const PASSTHROUGH = PolicySetHash.parse("7b30695c7a4df1b6a226bdd591c6d75b9917bb3af078af2d01be295e4df96974");

describe("W3C traceparent (Trace Context Level 1, §3.2)", () => {
  const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parent = "00f067aa0ba902b7";

  it("names the parent of a well-formed value, sampled or not, and of a later version with more after a dash", () => {
    expect(parseTraceparent(`00-${trace}-${parent}-01`)).toEqual({ traceId: trace, spanId: parent });
    expect(parseTraceparent(`00-${trace}-${parent}-00`)).toEqual({ traceId: trace, spanId: parent });
    expect(parseTraceparent(`01-${trace}-${parent}-01-extra`)).toEqual({ traceId: trace, spanId: parent });
  });

  it.each([
    ["version ff", `ff-${trace}-${parent}-01`],
    ["uppercase hex", `00-${trace.toUpperCase()}-${parent}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${parent}-01`],
    ["an all-zero parent id", `00-${trace}-${"0".repeat(16)}-01`],
    ["version 00 with more after it", `00-${trace}-${parent}-01-extra`],
    ["a later version with more, not after a dash", `01-${trace}-${parent}-01x`],
    ["a short trace id", `00-${trace.slice(1)}-${parent}-01`],
    ["other separators", `00_${trace}_${parent}_01`],
    ["not a string", 42],
  ])("is no parent: %s", (_name, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe("ids derived from Line hashes", () => {
  it("are the same for the same Line, and a Session's span id is never the span id of a call with the same hash", () => {
    const hash = "a2ceb7e07e8845bbe5e45c40575b6f47221aafa0ed73f5c288700747095aaeae";
    expect(callSpanId(hash)).toBe(callSpanId(hash));
    expect(callSpanId(hash)).toMatch(/^[0-9a-f]{16}$/);
    expect(sessionSpanId(hash)).not.toBe(callSpanId(hash));
    expect(callSpanId(hash)).not.toBe(callSpanId(`b${hash.slice(1)}`));
  });
});

/** A record written by the real writer, read back through the verifier's walk into calls. */
async function recorded(write: (writer: RecordWriter) => Promise<void>): Promise<CallRecord[]> {
  const path = join(tempDir(), "r.aarl");
  const writer = await RecordWriter.open(path, { key: KEY });
  await write(writer);
  await writer.close();
  const calls: CallRecord[] = [];
  const follower = new RecordFollower({ call: (c) => calls.push(c), session: () => undefined });
  await verifyRecord({ path }, { onLine: (l) => follower.line({ value: l.value, lineHash: l.lineHash, sessionIndex: l.at.session_index }) });
  follower.end();
  return calls;
}

async function one(result: CallResult): Promise<CallRecord> {
  const [call] = await recorded(async (writer) => {
    await writer.recordUnrun({ call_id: "call-1", tool_id: "read_text_file", policy_set_hash: PASSTHROUGH, request: Buffer.from("{}") }, result);
  });
  if (call === undefined) throw new Error("no call");
  return call;
}

const granted = {
  status: "granted",
  grant: { grant_id: "g", tool_id: "read_text_file", max_memory_bytes: 0, max_wall_ms: 0, max_output_bytes: 0 },
} as const;

describe("a call's status and error.type (SPEC Appendix A.4)", () => {
  it("an unanswered pass-through call is the execution's end, not the stations that say they did not judge it", async () => {
    const call = await one({
      policy: { status: "denied", reason: "not evaluated" },
      capability: { status: "denied", reason: "not evaluated" },
      execution: { status: "host_denied", reason: "child exited before responding" },
      decision_axes: {},
    });
    const plan = new SpanPlanner().call(call);
    expect("code" in plan ? undefined : [plan.attributes["error.type"], plan.status]).toEqual([
      "host_denied",
      { code: "error", message: "execution host_denied: child exited before responding" },
    ]);
  });

  it("a call the policy refused is the policy's verdict, though nothing ran", async () => {
    const call = await one({
      policy: { status: "rate_limited", reason: "10 a minute" },
      capability: { status: "denied", reason: "policy blocked before capability" },
      execution: { status: "host_denied", reason: "not executed" },
      decision_axes: { matched_rule: "slow-down" },
    });
    const plan = new SpanPlanner().call(call);
    expect("code" in plan ? undefined : [plan.attributes["error.type"], plan.attributes["aegis.policy.rule"]]).toEqual(["rate_limited", "slow-down"]);
  });

  it("a call that ran: a JSON-RPC error answer gives its code; isError gives tool_error; a clean answer no error, and its result only on request", async () => {
    const call = await one({ policy: { status: "allowed" }, capability: granted, execution: { status: "success" }, decision_axes: {} });
    const request = requestFacts(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x", arguments: { a: 1 } } })));
    expect(request).toMatchObject({ method: "tools/call", requestId: "3", idKey: "3" });
    const answer = (value: object): Buffer => Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 3, ...value }));
    const planOf = (response: Buffer, content = false) => {
      const plan = new SpanPlanner().call(call, { request, response: responseFacts(response, request.idKey), content });
      if ("code" in plan) throw new Error("untimed");
      return plan;
    };
    const error = planOf(answer({ error: { code: -32602, message: "bad arguments" } }));
    expect([error.attributes["error.type"], error.attributes["rpc.response.status_code"], error.status]).toEqual([
      "-32602",
      "-32602",
      { code: "error", message: "bad arguments" },
    ]);
    expect(planOf(answer({ result: { isError: true, content: [] } })).attributes["error.type"]).toBe("tool_error");
    const clean = planOf(answer({ result: { content: [{ type: "text", text: "ok" }] } }));
    expect(clean.status).toEqual({ code: "unset" });
    expect(clean.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    const withContent = planOf(answer({ result: { content: [{ type: "text", text: "ok" }] } }), true);
    expect(withContent.attributes["gen_ai.tool.call.result"]).toBe(JSON.stringify({ content: [{ type: "text", text: "ok" }] }));
    expect(withContent.attributes["gen_ai.tool.call.arguments"]).toBe(JSON.stringify({ a: 1 }));
    // An answer to another id (a string "3" is not 3) says nothing of this call.
    expect(responseFacts(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: "3", error: { code: -1, message: "x" } })), request.idKey)).toEqual({
      toolError: false,
    });
  });

  it("bytes the strict reader refuses, or a batch, give no facts", () => {
    expect(requestFacts(Buffer.from('{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}'))).toEqual({});
    expect(requestFacts(Buffer.from(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/call" }])))).toEqual({});
  });

  it("a Line without time gives no span, and says where", async () => {
    const path = join(tempDir(), "untimed.aarl");
    const writer = await RecordWriter.open(path, { key: KEY, clock: false });
    await writer.recordUnrun(
      { call_id: "call-1", tool_id: "t", policy_set_hash: PASSTHROUGH, request: Buffer.from("{}") },
      { policy: { status: "allowed" }, capability: granted, execution: { status: "success" }, decision_axes: {} },
    );
    await writer.close();
    const planner = new SpanPlanner();
    const plans: unknown[] = [];
    const follower = new RecordFollower({ call: (c) => plans.push(planner.call(c)), session: (s) => plans.push(planner.session(s)) });
    await verifyRecord({ path }, { onLine: (l) => follower.line({ value: l.value, lineHash: l.lineHash, sessionIndex: l.at.session_index }) });
    expect(plans).toEqual([
      { code: "untimed", sessionIndex: 0, seq: 1 },
      { code: "untimed", sessionIndex: 0, seq: 0 },
    ]);
  });
});
