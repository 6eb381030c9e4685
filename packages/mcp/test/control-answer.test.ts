import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ControlRequestError, requestControl, type ControlRequest, type ControlResponse, type ParkSummary } from "../src/index.js";
import { MAX_ANSWER_BYTES, listenControl } from "../src/control.js";
import { endless, fakeControl, type FakeAnswer, type FakeControl } from "./fake-control.js";

/**
 * `requestControl`, the client side of the control socket (SPEC §17.5): whatever listens at
 * the path answers, and it need not be a wrap. An answer too big, or not of the shapes §17.5
 * gives, is a `bad_answer`, read no further than the bound; a wrap's answer is taken.
 */
const LINE_HASH = "ab".repeat(32);
const APPROVE: ControlRequest = { op: "approve", approval_id: "apr-1" };
const LIST: ControlRequest = { op: "list" };

const PARK: ParkSummary = {
  approval_id: "apr-1",
  tool_id: "write_file",
  rule: "ask",
  parked_at: "2026-01-02T03:04:05.678Z",
  arguments: { code: "json", json: '{"path":"/w/a"}', bytes: 15, truncated: false },
  scope: { tool_id: "write_file", fs: { read_paths: [], write_paths: ["/w/a"] }, net: { http: [{ host: "example.org", ports: [443], methods: ["*"] }] } },
};

let listening: FakeControl | undefined;
afterEach(async () => {
  await listening?.close();
  listening = undefined;
});

async function ask(answer: FakeAnswer, request: ControlRequest): Promise<ControlResponse> {
  listening = await fakeControl(answer);
  return requestControl(listening.path, request);
}

async function fault(answer: FakeAnswer, request: ControlRequest): Promise<unknown> {
  const error = await ask(answer, request).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ControlRequestError);
  return error instanceof ControlRequestError ? error.fault : error;
}

const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

describe("requestControl reads a bounded answer (SPEC §17.5)", () => {
  it("an endless answer is cut at the bound: the connection is closed, and the answer is bad", async () => {
    const got = await fault(endless(Buffer.alloc(64 * 1024, "x")), LIST);
    expect(got).toEqual({
      code: "bad_answer",
      path: listening?.path,
      detail: `the answer is over ${MAX_ANSWER_BYTES} bytes: is this an aegis wrap control socket?`,
    });
    // The client hung up, rather than reading on: the listener sees its connection close.
    await listening?.clientGone;
  });

  it("a wrap's answer padded to the bound is taken, one byte over it is not", async () => {
    const answer = line({ ok: true, op: "list", pending: [PARK] });
    const padded = (bytes: number): string => `${" ".repeat(bytes - Buffer.byteLength(answer))}${answer}`;
    expect(await ask(padded(MAX_ANSWER_BYTES), LIST)).toEqual({ ok: true, op: "list", pending: [PARK] });
    await listening?.close();
    expect(await fault(padded(MAX_ANSWER_BYTES + 1), LIST)).toMatchObject({
      code: "bad_answer",
      detail: expect.stringContaining(`over ${MAX_ANSWER_BYTES} bytes`),
    });
  });
});

/** Write one byte of `text` every `everyMs`, never a line end, until the peer goes away. */
function trickle(socket: Socket, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write(" ");
  }, everyMs);
  socket.once("close", () => clearInterval(timer));
}

describe("the control socket's waits are deadlines, not idle times (SPEC §17.5)", () => {
  it("requestControl gives up on an answer that trickles in, at its deadline", async () => {
    listening = await fakeControl((socket) => trickle(socket, 20));
    const started = Date.now();
    const error = await requestControl(listening.path, LIST, 500).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ControlRequestError);
    expect(error instanceof ControlRequestError ? error.fault : error).toEqual({
      code: "no_wrap",
      path: listening.path,
      detail: "no whole answer within 500 ms",
    });
    expect(Date.now() - started).toBeLessThan(5000);
    await listening.clientGone;
  });

  it("wrap's end closes a connection whose request trickles in, 10 s after it opened", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "aegis-ctl-")), "control");
    const server = await listenControl(path, { answer: () => Promise.reject(new Error("never asked")), pending: () => [] });
    try {
      const socket = connect(path);
      const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())));
      socket.on("error", () => undefined);
      const opened = Date.now();
      trickle(socket, 200);
      const at = await closed;
      expect(at - opened).toBeGreaterThanOrEqual(9_000);
      expect(at - opened).toBeLessThan(20_000);
    } finally {
      await server.close();
    }
  }, 30_000);
});

describe("requestControl checks the answer's shape (SPEC §17.5)", () => {
  const withArguments = (args: unknown): unknown => ({ ok: true, op: "list", pending: [{ ...PARK, arguments: args }] });
  const withScope = (scope: unknown): unknown => ({ ok: true, op: "list", pending: [{ ...PARK, scope }] });
  it.each<[string, ControlRequest, unknown, string]>([
    ["pending not an array", LIST, { ok: true, op: "list", pending: 7 }, "pending: expected an array"],
    ["no pending", LIST, { ok: true, op: "list" }, "pending: expected an array"],
    ["an empty park", LIST, { ok: true, op: "list", pending: [{}] }, "pending[0].approval_id: expected a string"],
    ["a park without its tool", LIST, { ok: true, op: "list", pending: [PARK, { ...PARK, tool_id: 7 }] }, "pending[1].tool_id: expected a string"],
    ["a rule neither a string nor null", LIST, { ok: true, op: "list", pending: [{ ...PARK, rule: 3 }] }, "pending[0].rule: expected a string or null"],
    ["a park that is no object", LIST, { ok: true, op: "list", pending: [[]] }, "pending[0]: expected an object"],
    ["arguments of no known code", LIST, withArguments({ code: "yaml" }), "pending[0].arguments.code: expected none, json or no_canonical_form"],
    ["json arguments without bytes", LIST, withArguments({ code: "json", json: "{}", truncated: false }), "pending[0].arguments.bytes: expected an integer"],
    [
      "json arguments, truncated not a boolean",
      LIST,
      withArguments({ code: "json", json: "{}", bytes: 2 }),
      "pending[0].arguments.truncated: expected true or false",
    ],
    ["no scope", LIST, withScope(undefined), "pending[0].scope: expected an object"],
    [
      "read paths not strings",
      LIST,
      withScope({ tool_id: "t", fs: { read_paths: [1], write_paths: [] } }),
      "pending[0].scope.fs.read_paths[0]: expected a string",
    ],
    [
      "a port out of range",
      LIST,
      withScope({ tool_id: "t", net: { http: [{ host: "h", ports: [70000], methods: [] }] } }),
      "pending[0].scope.net.http[0].ports[0]: expected an integer from 0 to 65535",
    ],
    ["an approval without its seq", APPROVE, { ok: true, op: "approve", approval_id: "apr-1", line_hash: LINE_HASH }, "seq: expected an integer"],
    ["an approval with no more than ok and op", APPROVE, { ok: true, op: "approve" }, "approval_id: expected a string"],
    ["a seq that is not an integer", APPROVE, { ok: true, op: "approve", approval_id: "apr-1", seq: 1.5, line_hash: LINE_HASH }, "seq: expected an integer"],
    [
      "a line_hash that is no digest",
      APPROVE,
      { ok: true, op: "approve", approval_id: "apr-1", seq: 3, line_hash: "x" },
      "line_hash: expected 64 lowercase hex digits",
    ],
    [
      "the answer to another park",
      APPROVE,
      { ok: true, op: "approve", approval_id: "apr-2", seq: 3, line_hash: LINE_HASH },
      "approval_id: expected the request's",
    ],
    [
      "a denial, to an approval",
      APPROVE,
      { ok: true, op: "deny", approval_id: "apr-1", seq: 3, line_hash: LINE_HASH },
      'op: expected "approve", the request\'s',
    ],
    ["a list, to an approval", APPROVE, { ok: true, op: "list", pending: [] }, 'op: expected "approve", the request\'s'],
    [
      "a refusal of no known code",
      APPROVE,
      { ok: false, code: "teapot", message: "no" },
      "code: expected unknown_approval, already_decided, bad_request, record_failed",
    ],
    ["a refusal without a message", LIST, { ok: false, code: "bad_request" }, "message: expected a string"],
    ["ok neither true nor false", LIST, { ok: "yes", op: "list", pending: [] }, "ok: expected true or false"],
    ["an array", LIST, [], "the answer: expected an object"],
    ["null", LIST, null, "the answer: expected an object"],
  ])("%s is a bad answer, naming what is wrong", async (_, request, answer, detail) => {
    const got = await fault(line(answer), request);
    expect(got).toMatchObject({ code: "bad_answer", path: listening?.path });
    expect(got).toHaveProperty("detail", expect.stringContaining(`(${detail}`));
  });

  it("text that is not JSON is a bad answer", async () => {
    expect(await fault("<html>hello</html>\n", LIST)).toMatchObject({
      code: "bad_answer",
      detail: "the answer was not JSON: is this an aegis wrap control socket?",
    });
  });
});

describe("requestControl takes a wrap's answers (SPEC §17.5)", () => {
  it("a list, its parks of every kind of arguments, members it does not know ignored", async () => {
    const parks: ParkSummary[] = [
      PARK,
      { ...PARK, approval_id: "apr-2", rule: null, arguments: { code: "none" }, scope: { tool_id: "write_file" } },
      { ...PARK, approval_id: "apr-3", arguments: { code: "no_canonical_form" } },
      { ...PARK, approval_id: "apr-4", arguments: { code: "json", json: "[1", bytes: 5000, truncated: true } },
    ];
    const sent = { ok: true, op: "list", pending: parks.map((p) => ({ ...p, later: { x: 1 } })), version: 9 };
    expect(await ask(line(sent), LIST)).toEqual({ ok: true, op: "list", pending: parks });
    expect(listening?.requests).toEqual(['{"op":"list"}']);
  });

  it("an approval, a denial and a refusal", async () => {
    const approved = { ok: true, op: "approve", approval_id: "apr-1", seq: 7, line_hash: LINE_HASH } as const;
    expect(await ask(line({ ...approved, extra: [] }), APPROVE)).toEqual(approved);
    await listening?.close();
    const deny: ControlRequest = { op: "deny", approval_id: "apr-1", reason: "no" };
    const denied = { ok: true, op: "deny", approval_id: "apr-1", seq: 0, line_hash: LINE_HASH } as const;
    expect(await ask(line(denied), deny)).toEqual(denied);
    await listening?.close();
    const refused = { ok: false, code: "already_decided", message: "apr-1 was already approved" } as const;
    expect(await ask(line(refused), APPROVE)).toEqual(refused);
  });
});
