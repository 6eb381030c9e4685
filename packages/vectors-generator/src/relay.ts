import { answerVector, type RelayTranscript } from "@aegis/vectors/oracle";
import type { VectorSet } from "./vector-set.js";
import { call, client, json, ok, server, type Case } from "./relay-kit.js";
import { BINDINGS, POLICY, POLICY_CASES } from "./relay-policy-cases.js";

/**
 * SPEC §17: transcripts of an MCP session as the relay sees it (client frames, server
 * frames, answers to parks, the end) and what a relay records and answers for each. A relay
 * written elsewhere replays the events through its recorder and compares.
 */

/** Frames that forgiving readers take differently, each a tools/call of `rm` to them (SPEC §17.1). */
const UNREADABLE: readonly (readonly [string, string])[] = [
  ["duplicate_key", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"rm"}}'],
  ["lone_surrogate", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{"path":"\\udc00"}}}'],
  ["nan", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{"n":NaN}}}'],
  ["big_integer", '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"rm"}}'],
  ["too_deep", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{"d":${"[".repeat(128)}${"]".repeat(128)}}}}`],
  ["trailing_comma", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm",}}'],
];

const LISTING = json({
  jsonrpc: "2.0",
  id: 1,
  result: {
    tools: [{ name: "echo", description: "echoes", inputSchema: { type: "object", properties: { n: { type: "number", minimum: -0.5, default: null } } } }],
  },
});

const CASES: readonly Case[] = [
  {
    name: "passthrough_call",
    polarity: "positive",
    spec: ["17.2"],
    description: "One call and its answer, without a Policy Set: the reference's two Lines, member for member.",
    events: [client(call(1, "echo", { text: "hi" })), server(ok(1)), { end: "child_exited" }],
  },
  {
    name: "only_tools_call",
    polarity: "positive",
    spec: ["17.2"],
    description: "initialize, tools/list, ping and a notification are relayed and recorded nowhere.",
    events: [
      client(json({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} })),
      server(ok(0, {})),
      client(json({ jsonrpc: "2.0", method: "notifications/initialized" })),
      client(json({ jsonrpc: "2.0", id: 9, method: "ping" })),
      server(ok(9, {})),
      { end: "child_exited" },
    ],
  },
  {
    name: "crlf_kept",
    polarity: "positive",
    spec: ["17.1", "17.2"],
    description: "A frame ending in \\r: the \\r is in the request digest.",
    events: [client(`${call(1, "echo")}\r`), server(`${ok(1)}\r`), { end: "child_exited" }],
  },
  {
    name: "not_utf8_refused",
    polarity: "negative",
    spec: ["17.1"],
    description: "A frame that is not UTF-8 and not JSON: refused without a Policy Set too, and recorded by its digest as <unreadable-frame>.",
    events: [{ client_hex: "fffe007b80" }, { end: "child_exited" }],
  },
  {
    name: "not_utf8_tools_call",
    polarity: "negative",
    spec: ["17.1", "17.9"],
    description: "A tools/call whose argument holds a byte that is not UTF-8: refused, never read as U+FFFD (one reader substitutes, another raises).",
    events: [
      { client_hex: Buffer.concat([Buffer.from(call(1, "echo", { t: "X" }).replace('"X"', '"')), Buffer.from([0xff]), Buffer.from('"}}}')]).toString("hex") },
      { end: "child_exited" },
    ],
  },
  ...UNREADABLE.map(([code, text]): Case => ({
    name: `unreadable_${code}`,
    polarity: "negative",
    spec: ["17.1"],
    description: `A tools/call that forgiving readers take differently (${code}): refused UNREADABLE_FRAME, recorded by its digest; the next call runs.`,
    events: [client(text), client(call(2, "echo")), server(ok(2)), { end: "child_exited" }],
  })),
  {
    name: "byte_order_mark",
    polarity: "negative",
    spec: ["17.1"],
    description: "A frame that starts with a UTF-8 byte order mark: refused (Python's json refuses it, a decoder may drop it).",
    events: [{ client_hex: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(call(1, "echo"))]).toString("hex") }, { end: "child_exited" }],
  },
  {
    name: "answer_unpaired_id",
    polarity: "negative",
    spec: ["17.2"],
    description:
      'An answer with id "1" to the call 1 (a client matching by Number(id) would take it): not relayed, recorded as <dropped-answer>; the exact answer closes the call.',
    events: [client(call(1, "echo")), server(ok("1")), server(ok(1)), server(ok(1)), { end: "child_exited" }],
  },
  {
    name: "answer_without_id",
    polarity: "negative",
    spec: ["17.2"],
    description: "An answer with id null, and one that also holds a method: neither pairs with a request, neither reaches the client.",
    events: [
      client(call(1, "echo")),
      server(json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })),
      server(json({ jsonrpc: "2.0", id: 1, method: "notifications/message", result: { content: [] } })),
      server(ok(1)),
      { end: "child_exited" },
    ],
  },
  {
    name: "answer_unreadable",
    polarity: "negative",
    spec: ["17.1", "17.2"],
    description: "A server frame with a key written twice: not relayed; the call stays in flight until an answer that reads.",
    events: [client(call(1, "echo")), server('{"jsonrpc":"2.0","id":2,"id":1,"result":{}}'), server(ok(1)), { end: "child_exited" }],
  },
  {
    name: "error_is_success",
    polarity: "positive",
    spec: ["17.2"],
    description: "The server's JSON-RPC error answers the call: execution success (the call ran, the tool erred).",
    events: [client(call(1, "echo")), server(json({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "tool failed" } })), { end: "child_exited" }],
  },
  {
    name: "server_request_collides",
    polarity: "negative",
    spec: ["17.2"],
    description: "The server's own request with the call's id does not close it; the answer after it does.",
    events: [
      client(call(1, "echo")),
      server(json({ jsonrpc: "2.0", id: 1, method: "sampling/createMessage", params: {} })),
      server(ok(1)),
      { end: "child_exited" },
    ],
  },
  {
    name: "ids_by_json_text",
    polarity: "negative",
    spec: ["17.2"],
    description: 'The ids 1 and "1" are two calls; an answer to "1" closes only that one.',
    events: [client(call(1, "a")), client(call("1", "b")), server(ok("1")), { end: "child_exited" }],
  },
  {
    name: "batch_refused",
    polarity: "negative",
    spec: ["17.1", "17.3"],
    description:
      "A batch of two calls and a ping: refused whole without a Policy Set too (MCP has no batches); each call recorded as not run, each request answered.",
    events: [client(json([JSON.parse(call(1, "a")), JSON.parse(call(2, "b")), { jsonrpc: "2.0", id: 3, method: "ping" }])), { end: "child_exited" }],
  },
  {
    name: "batch_without_call",
    polarity: "positive",
    spec: ["17.1", "17.2"],
    description: "A batch holding no tools/call is relayed, and the server's batch of answers pairs element by element.",
    events: [
      client(
        json([
          { jsonrpc: "2.0", id: 1, method: "ping" },
          { jsonrpc: "2.0", method: "notifications/x" },
        ]),
      ),
      server(json([JSON.parse(ok(1, {})), { jsonrpc: "2.0", id: 5, method: "roots/list" }])),
      { end: "child_exited" },
    ],
  },
  {
    name: "no_name",
    polarity: "negative",
    spec: ["17.2"],
    description: "A tools/call without a string params.name: recorded at once as not executed, and relayed.",
    events: [client(json({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} })), { end: "child_exited" }],
  },
  {
    name: "notification_call",
    polarity: "negative",
    spec: ["17.2"],
    description: "tools/call without an id and with id null: recorded, and nothing can answer them.",
    events: [client(json({ jsonrpc: "2.0", method: "tools/call", params: { name: "echo" } })), client(call(null, "echo")), { end: "child_exited" }],
  },
  {
    name: "duplicate_id",
    polarity: "negative",
    spec: ["17.2", "17.3"],
    description: "A call reusing an id in flight is refused; the first call keeps its answer.",
    events: [client(call(5, "first")), client(call(5, "second")), server(ok(5)), { end: "child_exited" }],
  },
  {
    name: "cancelled",
    polarity: "negative",
    spec: ["17.2"],
    description: "Two calls cancelled by the client; one is answered anyway, the other not.",
    events: [
      client(call(1, "slow")),
      client(call(2, "slow")),
      client(json({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } })),
      client(json({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } })),
      server(ok(2)),
      { end: "child_exited" },
    ],
  },
  {
    name: "unanswered_child_exited",
    polarity: "negative",
    spec: ["17.2", "17.7"],
    description: "The server's output ended with a call in flight.",
    events: [client(call(1, "never")), { end: "child_exited" }],
  },
  {
    name: "unanswered_grace_expired",
    polarity: "negative",
    spec: ["17.2", "17.7"],
    description: "The client hung up and the server said nothing for the grace.",
    events: [client(call(1, "never")), { end: "grace_expired" }],
  },
  {
    name: "unanswered_signalled",
    polarity: "negative",
    spec: ["17.2", "17.7"],
    description: "wrap was stopped by SIGTERM with a call in flight.",
    events: [client(call(1, "never")), { end: "signalled", signal: "SIGTERM" }],
  },
  {
    name: "record_fails",
    polarity: "negative",
    spec: ["17.2"],
    description: "Once the record cannot be written, a call is answered RECORD_FAILED and not relayed.",
    events: [client(call(1, "echo")), server(ok(1)), { record_fails: true }, client(call(2, "echo")), { end: "child_exited" }],
  },
  {
    name: "rounds_linked",
    polarity: "positive",
    spec: ["17.2"],
    description:
      "MCP 2026-07-28: a tools/call answered input_required, made again with inputResponses and the requestState echoed: two Calls, the second's outcome naming the first in continues_call; a retry with another requestState continues nothing.",
    events: [
      client(call(1, "deploy", { env: "prod" })),
      server(
        ok(1, {
          resultType: "input_required",
          inputRequests: { confirm: { method: "elicitation/create", params: { message: "Deploy to prod?", requestedSchema: { type: "object" } } } },
          requestState: "s1",
        }),
      ),
      client(
        json({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "deploy", arguments: { env: "prod" }, inputResponses: { confirm: { action: "accept" } }, requestState: "s2" },
        }),
      ),
      server(ok(2)),
      client(
        json({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "deploy", arguments: { env: "prod" }, inputResponses: { confirm: { action: "accept" } }, requestState: "s1" },
        }),
      ),
      server(ok(3, { content: [{ type: "text", text: "deployed" }], resultType: "complete" })),
      { end: "child_exited" },
    ],
  },
  {
    name: "pinned",
    polarity: "positive",
    spec: ["17.6"],
    description:
      "A tools/list answer pins echo's definition (canonical form: floats, null, negatives allowed); the call after it names the digest, a call of an unlisted tool none.",
    events: [
      client(json({ jsonrpc: "2.0", id: 1, method: "tools/list" })),
      server(LISTING),
      client(call(2, "echo")),
      server(ok(2)),
      client(call(3, "unlisted")),
      server(ok(3)),
      { end: "child_exited" },
    ],
  },
  {
    name: "inner_carriage_return",
    polarity: "negative",
    spec: ["17.1", "17.3"],
    description: "A frame with a \\r before its end (a reader that ends lines at \\r would see a ping and a call): refused, recorded by its digest.",
    events: [client(`${json({ jsonrpc: "2.0", id: 1, method: "ping" })}\r${call(3, "delete_everything")}`), { end: "child_exited" }],
  },
  {
    name: "request_reuses_call_id",
    polarity: "negative",
    spec: ["17.2"],
    description: "A ping reusing a call's id in flight, and a call reusing a ping's: both refused; the call keeps its own answer.",
    events: [
      client(call(7, "slow")),
      client(json({ jsonrpc: "2.0", id: 7, method: "ping" })),
      client(json({ jsonrpc: "2.0", id: 8, method: "ping" })),
      client(call(8, "echo")),
      server(ok(8, {})),
      server(ok(7)),
      { end: "child_exited" },
    ],
  },
];

export async function relayVectors(set: VectorSet): Promise<void> {
  const policy = set.file("relay/policy.yaml", `${POLICY}\n`);
  const bindings = set.file("relay/bindings.yaml", BINDINGS);
  for (const c of [...CASES, ...POLICY_CASES]) {
    const transcript: RelayTranscript = { role: c.role ?? null, session: null, ...(c.refusal === undefined ? {} : { refusal: c.refusal }), events: c.events };
    const path = set.file(`relay/${c.name}.json`, `${JSON.stringify(transcript, null, 2)}\n`);
    const withPolicy = c.policy === true;
    set.add({
      id: `relay/${c.name}`,
      kind: "relay",
      description: c.description,
      spec: c.spec,
      flags: [c.polarity, "relay"],
      input: { transcript: path, policy: withPolicy ? policy : null, bindings: withPolicy ? bindings : null },
      expected: await answerVector({ kind: "relay", transcript, policy: withPolicy ? `${POLICY}\n` : null, bindings: withPolicy ? BINDINGS : null }),
    });
  }
}
