import { relayAnswer, type RelayEvent, type RelayTranscript } from "@aegis/cli/internal";
import type { Polarity, VectorSet } from "./vector-set.js";

/**
 * SPEC §17: transcripts of an MCP session as the relay sees it (client frames, server
 * frames, answers to parks, the end) and what a relay records and answers for each. A relay
 * written elsewhere replays the events through its recorder and compares.
 */
const json = (value: unknown): string => JSON.stringify(value);
const call = (id: unknown, name: string, args: Record<string, unknown> = {}): string =>
  json({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const ok = (id: unknown, result: unknown = { content: [{ type: "text", text: "done" }] }): string => json({ jsonrpc: "2.0", id, result });
const client = (text: string): RelayEvent => ({ client: text });
const server = (text: string): RelayEvent => ({ server: text });

const POLICY = [
  "version: 2",
  "default: deny",
  "rules:",
  "  - { id: read-data, action: allow, capability: fs.read, fs: { path_prefix: /data/ } }",
  "  - { id: echo, action: allow, tool: echo }",
  "  - { id: review-writes, action: pending_approval, tool: write_note }",
  "  - { id: one-search, action: rate_limit, tool: search, rate: { max: 1, per_seconds: 60 } }",
  "  - { id: pay, action: allow, tool: pay }",
  "  - { id: no-round-sums, action: deny, tool: pay, args: [{ pointer: /params/arguments/amount, exact: 1000 }] }",
].join("\n");
const BINDINGS = [
  "version: 1",
  "roots: [/data]",
  "tools:",
  "  - tool: read_text_file",
  "    capability: fs.read",
  "    paths: [{ pointer: /params/arguments/path }]",
  "",
].join("\n");

interface Case {
  readonly name: string;
  readonly polarity: Polarity;
  readonly spec: readonly string[];
  readonly description: string;
  readonly events: readonly RelayEvent[];
  readonly policy?: boolean;
  readonly role?: string;
  /** How refused calls are answered (SPEC §17.3); absent, the default (`tool-result`). */
  readonly refusal?: "reference";
}

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
  {
    name: "policy_not_json",
    polarity: "negative",
    spec: ["17.1", "17.3"],
    description: "Under a Policy Set, a frame that is not JSON is refused: what wrap cannot read does not reach the server.",
    policy: true,
    events: [client("{not json"), { end: "child_exited" }],
  },
  {
    name: "policy_park_other_arguments",
    polarity: "negative",
    spec: ["17.5"],
    description: "An approval lets through a retry of the very call approved, not the same tool with other arguments.",
    policy: true,
    events: [
      client(call(1, "write_note", { path: "a.txt" })),
      { approve: "apr-vector-1" },
      client(call(2, "write_note", { path: "/etc/shadow" })),
      client(call(3, "write_note", { path: "a.txt" })),
      server(ok(3)),
      { end: "child_exited" },
    ],
  },
  {
    name: "policy_denied",
    polarity: "negative",
    spec: ["17.3"],
    description: "A call no rule allows: answered with a tool result with isError, naming the rule and the reason; recorded with the set's hash.",
    policy: true,
    role: "agent",
    events: [client(call(1, "rm", { path: "/" })), { end: "child_exited" }],
  },
  {
    name: "policy_allowed_bound",
    polarity: "positive",
    spec: ["17.3", "17.4"],
    description: "A bound relative path resolved against the declared root: the fs rule matches, the call runs.",
    policy: true,
    events: [
      client(call(1, "read_text_file", { path: "notes/../a.md" })),
      server(ok(1)),
      client(call(2, "read_text_file", { path: "/etc/passwd" })),
      { end: "child_exited" },
    ],
  },
  {
    name: "policy_batch_refused",
    polarity: "negative",
    spec: ["17.3", "17.5"],
    description:
      "Under a Policy Set, a batch holding a parked call's approved retry: refused whole, no call decided, and the approval is still there for the retry sent alone.",
    policy: true,
    events: [
      client(call(1, "write_note", { path: "/data/a" })),
      { approve: "apr-vector-1" },
      client(json([JSON.parse(call(2, "echo")), JSON.parse(call(3, "write_note", { path: "/data/a" }))])),
      client(call(4, "write_note", { path: "/data/a" })),
      server(ok(4)),
      { end: "child_exited" },
    ],
  },
  {
    name: "policy_unevaluable_argument",
    polarity: "negative",
    spec: ["15.2", "15.5", "17.3"],
    description:
      'A deny rule on amount 1000 and a call with 1000.0, which a server reads as 1000: the matcher cannot be evaluated, so the call is refused POLICY_UNEVALUABLE, never allowed as "no match".',
    policy: true,
    events: [
      client(call(1, "pay", { amount: 999 })),
      server(ok(1)),
      client(call(2, "pay").replace('"arguments":{}', '"arguments":{"amount":1000.0}')),
      { end: "child_exited" },
    ],
  },
  {
    name: "policy_no_name_refused",
    polarity: "negative",
    spec: ["17.2", "17.3"],
    description: "Under a Policy Set, a tools/call naming no tool the set could judge is refused HOST_DENIED, not relayed.",
    policy: true,
    events: [client(json({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 7 } })), { end: "child_exited" }],
  },
  {
    name: "policy_client_roots",
    polarity: "negative",
    spec: ["17.4"],
    description:
      "A relative path resolves against the declared root until the client answers roots/list with another root; after that its base is not known, and the fs rule fails closed.",
    policy: true,
    events: [
      client(call(1, "read_text_file", { path: "a.md" })),
      server(ok(1)),
      server(json({ jsonrpc: "2.0", id: 0, method: "roots/list" })),
      client(json({ jsonrpc: "2.0", id: 0, result: { roots: [{ uri: "file:///nonexistent/elsewhere" }] } })),
      client(call(2, "read_text_file", { path: "a.md" })),
      client(call(3, "read_text_file", { path: "/data/b.md" })),
      server(ok(3)),
      { end: "child_exited" },
    ],
  },
  {
    name: "policy_notification_dropped",
    polarity: "negative",
    spec: ["17.3"],
    description: "A refused tools/call without an id: dropped, nothing to answer.",
    policy: true,
    events: [client(json({ jsonrpc: "2.0", method: "tools/call", params: { name: "rm" } })), { end: "child_exited" }],
  },
  {
    name: "policy_rate_limited",
    polarity: "negative",
    spec: ["17.3"],
    description: "The second call within a rate window is refused RATE_LIMITED.",
    policy: true,
    events: [client(call(1, "search")), server(ok(1)), client(call(2, "search")), { end: "child_exited" }],
  },
  {
    name: "policy_park_approve",
    polarity: "negative",
    spec: ["17.3", "17.5"],
    description: "A parked call; an unknown id refused; the approval recorded; one retry runs under it; the next is parked again.",
    policy: true,
    events: [
      client(call(1, "write_note")),
      { approve: "apr-nobody" },
      { approve: "apr-vector-1" },
      { approve: "apr-vector-1" },
      client(call(2, "write_note")),
      server(ok(2)),
      client(call(3, "write_note")),
      { end: "child_exited" },
    ],
  },
  {
    name: "policy_reference_refusals",
    polarity: "negative",
    spec: ["17.3"],
    description:
      "--refusal reference: each refused call answered with the Rust reference's JSON-RPC error, -32042 and data.aegis holding layer and code only, whatever the code; an unreadable frame likewise.",
    policy: true,
    refusal: "reference",
    events: [
      client(call(1, "rm", { path: "/" })),
      client(call(2, "search")),
      server(ok(2)),
      client(call(3, "search")),
      client(call(4, "write_note")),
      client(call(5, "pay").replace('"arguments":{}', '"arguments":{"amount":1000.0}')),
      client(json({ jsonrpc: "2.0", id: 6, method: "tools/call", params: {} })),
      client("{not json"),
      { end: "child_exited" },
    ],
  },
  {
    name: "duplicate_id_reference",
    polarity: "negative",
    spec: ["17.2", "17.3"],
    description: "--refusal reference without a Policy Set: a call reusing an id in flight gets the reference's error shape with aegis-ts's code.",
    refusal: "reference",
    events: [client(call(5, "first")), client(call(5, "second")), server(ok(5)), { end: "child_exited" }],
  },
  {
    name: "policy_park_deny",
    polarity: "negative",
    spec: ["17.5"],
    description: "A parked call denied by a human: the decision is recorded, and a retry is parked again.",
    policy: true,
    events: [client(call(1, "write_note")), { deny: "apr-vector-1", reason: "not today" }, client(call(2, "write_note")), { end: "child_exited" }],
  },
];

export async function relayVectors(set: VectorSet): Promise<void> {
  const policy = set.file("relay/policy.yaml", `${POLICY}\n`);
  const bindings = set.file("relay/bindings.yaml", BINDINGS);
  for (const c of CASES) {
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
      expected: await relayAnswer(transcript, withPolicy ? `${POLICY}\n` : null, withPolicy ? BINDINGS : null),
    });
  }
}
