import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { RecordWriter, PolicySetHash, SigningKey, type JsonObject } from "@aegis/format";
import { canonicalize } from "@aegis/format/internal";
import { EnvelopeStore } from "@aegis/envelope";
import { OtlpCollector, decodeJson, type ReceivedSpan } from "../../mcp/test/otlp-collector.js";
import { BIN, STACK_TRACE, UNBUNDLED, aegis, tempDir } from "./support.js";

/** The real CLI, without blocking this process: the collector it sends to runs here. */
function run(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: readonly string[] = [],
  script: string = BIN,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      env: { ...process.env, AEGIS_DEBUG: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    child.once("error", reject);
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
  });
}

type Line = JsonObject & { readonly line_type: string; readonly seq: number; readonly time: string };

function linesOf(path: string): Line[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Line);
}

function lineHash(line: JsonObject): string {
  return createHash("sha256").update(canonicalize(line), "utf8").digest("hex");
}

/** A Line's `time` as OTLP's nanoseconds since the epoch. */
function nanos(line: Line): string {
  return (BigInt(Date.parse(line.time)) * 1_000_000n).toString();
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

const collectors: OtlpCollector[] = [];
async function collector(): Promise<OtlpCollector> {
  const c = await OtlpCollector.start();
  collectors.push(c);
  return c;
}
afterEach(async () => {
  for (const c of collectors.splice(0)) await c.close();
});

let dir = "";
let record = "";
let envelope = "";
let publicKey = "";

beforeAll(() => {
  dir = join(tempDir(), "demo");
  const demo = aegis(["demo", "--out", dir]);
  expect(demo.status, demo.stderr).toBe(0);
  record = join(dir, "session.aarl");
  envelope = join(dir, "session.envelope");
  publicKey =
    readFileSync(join(dir, "signing.pub"), "utf8")
      .split("\n")
      .find((l) => /^[0-9a-f]{64}$/.test(l)) ?? "";
});

/**
 * What the demo record says each call's span must be, read from its Lines here: one span per
 * outcome, from its intent's time to its own, its Lines' hashes and positions, the policy's
 * verdict and rule, and status ERROR with `error.type` for a call that did not run clean.
 */
function expectDemoSpans(spans: readonly ReceivedSpan[]): void {
  const lines = linesOf(record);
  const open = lines[0];
  const close = lines.at(-1);
  if (open === undefined || close === undefined) throw new Error("an empty demo record");
  const outcomes = lines.filter((l) => l.line_type === "outcome");
  expect(outcomes).toHaveLength(6);
  expect(spans).toHaveLength(outcomes.length + 1);

  const session = spans.find((s) => s.name === "aegis session");
  expect(session).toBeDefined();
  if (session === undefined) return;
  expect(session.parentSpanId).toBe("");
  expect(session.startNs).toBe(nanos(open));
  expect(session.endNs).toBe(nanos(close));
  expect(session.attributes).toMatchObject({
    "aegis.session.index": 0,
    "aegis.session.open.line_hash": lineHash(open),
    "aegis.session.close.line_hash": lineHash(close),
    "aegis.session.closed": true,
    "aegis.session.calls": 6,
    "aegis.key_id": str(open["key_id"]),
  });
  expect(session.resource["service.name"]).toBe("aegis");

  for (const outcome of outcomes) {
    const callId = str(outcome["call_id"]);
    const intent = lines.find((l) => l.line_type === "intent" && l["call_id"] === callId);
    if (intent === undefined) throw new Error(`no intent for ${callId}`);
    const span = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === callId);
    expect(span, callId).toBeDefined();
    if (span === undefined) continue;
    const policy = outcome["policy"] as { status: string };
    const execution = outcome["execution"] as { status: string };
    const axes = outcome["decision_axes"] as { matched_rule?: string };
    expect(span.name).toBe(`execute_tool ${str(outcome["tool_id"])}`);
    expect(span.kind).toBe(1); // INTERNAL
    expect(span.traceId).toBe(session.traceId);
    expect(span.parentSpanId).toBe(session.spanId);
    expect(span.links.map((l) => [l.traceId, l.spanId])).toContainEqual([session.traceId, session.spanId]);
    expect(span.startNs).toBe(nanos(intent));
    expect(span.endNs).toBe(nanos(outcome));
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": str(outcome["tool_id"]),
      "gen_ai.tool.call.id": callId,
      "aegis.key_id": str(outcome["key_id"]),
      "aegis.session.index": 0,
      "aegis.session.open.line_hash": lineHash(open),
      "aegis.intent.seq": intent.seq,
      "aegis.intent.line_hash": lineHash(intent),
      "aegis.outcome.seq": outcome.seq,
      "aegis.outcome.line_hash": lineHash(outcome),
      "aegis.request_digest": str(outcome["request_digest"]),
      "aegis.policy_set_hash": str(outcome["policy_set_hash"]),
      "aegis.policy.status": policy.status,
    });
    expect(span.attributes["aegis.policy.rule"]).toBe(axes.matched_rule);
    // Never without --include-content.
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(span.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    const clean = policy.status === "allowed" && execution.status === "success";
    expect(span.status.code, callId).toBe(clean ? 0 : 2);
    expect(span.attributes["error.type"], callId).toBe(clean ? undefined : policy.status === "allowed" ? execution.status : policy.status);
  }
  // The call that ran under the parked call's approval links to the parked call's span.
  const parked = outcomes.find((o) => (o["policy"] as { status: string }).status === "pending_approval");
  const resumed = outcomes.find((o) => (o["decision_axes"] as { approval_ref?: string }).approval_ref !== undefined);
  const parkedSpan = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === parked?.["call_id"]);
  const resumedSpan = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === resumed?.["call_id"]);
  expect(resumedSpan?.links.map((l) => l.spanId)).toContain(parkedSpan?.spanId);
}

/** Spans keyed by span id, for comparing two exports. */
function bySpanId(spans: readonly ReceivedSpan[]): Map<string, ReceivedSpan> {
  return new Map(spans.map((s) => [s.spanId, s]));
}

describe("aegis export --format otlp: the demo record on a local OTLP/HTTP endpoint", () => {
  it("http/protobuf (the default): one span per call, decoded with the OTLP definitions; MCP attributes from the Envelope; the same ids the second time", async () => {
    const c = await collector();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: c.endpoint, OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=aegis-test" };
    const first = await run(["export", "--format", "otlp", "--envelope", envelope, "--key", publicKey, record], env);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain("record: Verified (pinned to");
    expect(first.stderr).toContain(`exported 7 spans (6 calls, 1 Session) to ${c.endpoint}/v1/traces`);
    expect(c.requests.every((r) => r.contentType === "application/x-protobuf" && r.path === "/v1/traces" && r.headers["x-tenant"] === "aegis-test")).toBe(true);
    expectDemoSpans(c.spans);
    // The demo's requests are JSON-RPC tools/call with the call's id: the Envelope says so.
    for (const span of c.spans.filter((s) => s.name !== "aegis session")) {
      expect(span.attributes["mcp.method.name"]).toBe("tools/call");
      expect(span.attributes["jsonrpc.request.id"]).toBe(span.attributes["gen_ai.tool.call.id"]);
    }

    const firstSpans = [...c.spans];
    c.spans.length = 0;
    const second = await run(["export", "--format", "otlp", "--envelope", envelope, record], env);
    expect(second.status, second.stderr).toBe(0);
    expect(bySpanId(c.spans)).toEqual(bySpanId(firstSpans));
  });

  it("http/json: the same spans", async () => {
    const proto = await collector();
    const json = await collector();
    expect((await run(["export", "--format", "otlp", "--envelope", envelope, record], { OTEL_EXPORTER_OTLP_ENDPOINT: proto.endpoint })).status).toBe(0);
    const r = await run(["export", "--format", "otlp", "--envelope", envelope, record], {
      OTEL_EXPORTER_OTLP_ENDPOINT: json.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(json.requests.every((q) => q.contentType === "application/json")).toBe(true);
    expectDemoSpans(json.spans);
    expect(bySpanId(json.spans)).toEqual(bySpanId(proto.spans));
  });

  it("without the Envelope: the same ids, and no attribute only the bytes could give", async () => {
    const c = await collector();
    const r = await run(["export", "--format", "otlp", record], { OTEL_EXPORTER_OTLP_ENDPOINT: c.endpoint });
    expect(r.status, r.stderr).toBe(0);
    expectDemoSpans(c.spans);
    expect(c.spans.some((s) => s.attributes["mcp.method.name"] !== undefined || s.attributes["jsonrpc.request.id"] !== undefined)).toBe(false);
  });

  it("an endpoint that refuses: exit 2, and it says how many spans were delivered", async () => {
    const c = await collector();
    const endpoint = c.endpoint;
    await c.close();
    const r = await run(["export", "--format", "otlp", record], { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "1000" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`error: ${endpoint}/v1/traces did not take the spans`);
    expect(r.stderr).toContain("0 of 7 were delivered before");
    expect(r.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("aegis export --format otlp-json: the Collector's file form", () => {
  it("one ExportTraceServiceRequest a line, holding the spans the endpoint gets", async () => {
    const c = await collector();
    expect((await run(["export", "--format", "otlp", "--envelope", envelope, record], { OTEL_EXPORTER_OTLP_ENDPOINT: c.endpoint })).status).toBe(0);
    const out = join(dir, "spans.otlp.jsonl");
    const written = await run(["export", "--format", "otlp-json", "--envelope", envelope, "--out", out, record]);
    expect(written.status, written.stderr).toBe(0);
    expect(written.stdout).toBe("");
    const lines = readFileSync(out, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    const spans = lines.filter((l) => l !== "").flatMap(decodeJson);
    expectDemoSpans(spans);
    expect(bySpanId(spans)).toEqual(bySpanId(c.spans));
    // Without --out: the same lines on standard output.
    const printed = await run(["export", "--format", "otlp-json", "--envelope", envelope, record]);
    expect(printed.status).toBe(0);
    expect(printed.stdout).toBe(readFileSync(out, "utf8"));
  });
});

describe("aegis export: what is not exported", () => {
  it("a Tampered record: exit 1, nothing sent, no file written", async () => {
    const c = await collector();
    const tampered = join(dir, "session-tampered.aarl");
    const sent = await run(["export", "--format", "otlp", tampered], { OTEL_EXPORTER_OTLP_ENDPOINT: c.endpoint });
    expect(sent.status).toBe(1);
    expect(sent.stderr).toMatch(/^error: the record is Tampered: .*: nothing was exported$/m);
    const out = join(dir, "tampered.jsonl");
    const written = await run(["export", "--format", "otlp-json", "--out", out, tampered]);
    expect(written.status).toBe(1);
    expect(written.stdout).toBe("");
    expect(existsSync(out)).toBe(false);
    expect(c.requests).toHaveLength(0);
  });

  it("a record signed by a key not trusted: exit 1, nothing exported", async () => {
    const other = SigningKey.generate().publicKeyHex;
    const r = await run(["export", "--format", "otlp-json", "--key", other, record]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
  });

  it("an Indeterminate record: exit 3 and nothing, unless --allow-indeterminate; its last calls then say they had no outcome", async () => {
    // The demo record without its close and its last outcome: a Session still open, a call in flight.
    const open = join(dir, "open.aarl");
    writeFileSync(open, `${readFileSync(record, "utf8").split("\n").slice(0, -3).join("\n")}\n`);
    const refused = await run(["export", "--format", "otlp-json", open]);
    expect(refused.status).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/^error: the record is Indeterminate: .*: nothing was exported$/m);
    const allowed = await run(["export", "--format", "otlp-json", "--allow-indeterminate", open]);
    expect(allowed.status, allowed.stderr).toBe(0);
    const spans = allowed.stdout
      .split("\n")
      .filter((l) => l !== "")
      .flatMap(decodeJson);
    const inFlight = spans.find((s) => s.attributes["gen_ai.tool.call.id"] === "call-6");
    expect(inFlight?.attributes).toMatchObject({ "error.type": "no_outcome", "aegis.call.ending": "in_flight" });
    expect(inFlight?.status.code).toBe(2);
    expect(spans.find((s) => s.name === "aegis session")?.attributes["aegis.session.closed"]).toBe(false);
  });

  it("a record whose Lines carry no time, as the reference's: exit 2, nothing exported", async () => {
    const path = join(tempDir(), "untimed.aarl");
    const writer = await RecordWriter.open(path, { key: SigningKey.generate(), clock: false });
    await writer.close();
    const r = await run(["export", "--format", "otlp-json", path]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("error: the Line at session 0 seq 0 carries no time, and a span needs one: nothing was exported");
  });

  it("usage errors: exit 1 with error: and help:", async () => {
    for (const [args, message] of [
      [["export", "--format", "zipkin", record], "--format takes otlp or otlp-json"],
      [["export", "--format", "otlp", "--out", "x.json", record], "--out is for --format otlp-json"],
      [["export", "--format", "otlp-json", "--include-content", record], "--include-content needs --envelope"],
    ] as const) {
      const r = await run(args);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`error: ${message}`);
      expect(r.stderr).toContain("help: ");
      expect(r.stderr).not.toMatch(STACK_TRACE);
    }
  });

  it("a protocol aegis does not export over: exit 2 before the record is read", async () => {
    const r = await run(["export", "--format", "otlp", join(dir, "no-such.aarl")], { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('error: OpenTelemetry: OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not one aegis exports over');
  });
});

describe("aegis export: a call whose request carries a traceparent", () => {
  it("joins that trace, under the span it names, still linked to its Session; arguments and result only with --include-content", async () => {
    const work = tempDir();
    const path = join(work, "traced.aarl");
    const store = await EnvelopeStore.open(join(work, "envelope"));
    const writer = await RecordWriter.open(path, { key: SigningKey.generate(), envelope: store });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    const request = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "read_text_file", arguments: { path: "/srv/notes.md" }, _meta: { traceparent: `00-${traceId}-${parentId}-01` } },
    };
    const response = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "ship on friday" }] } };
    await writer.beginCall({
      call_id: "call-1",
      tool_id: "read_text_file",
      policy_set_hash: PolicySetHash.parse("7b30695c7a4df1b6a226bdd591c6d75b9917bb3af078af2d01be295e4df96974"),
      request: Buffer.from(JSON.stringify(request)),
    });
    await writer.endCall("call-1", {
      policy: { status: "allowed" },
      capability: {
        status: "granted",
        grant: { grant_id: "g-1", tool_id: "read_text_file", max_memory_bytes: 0, max_wall_ms: 0, max_output_bytes: 0 },
      },
      execution: { status: "success" },
      decision_axes: {},
      response: Buffer.from(JSON.stringify(response)),
    });
    await writer.close();
    await store.close();

    const plain = await run(["export", "--format", "otlp-json", "--envelope", join(work, "envelope"), path]);
    expect(plain.status, plain.stderr).toBe(0);
    const spans = plain.stdout
      .split("\n")
      .filter((l) => l !== "")
      .flatMap(decodeJson);
    const session = spans.find((s) => s.name === "aegis session");
    const call = spans.find((s) => s.name === "execute_tool read_text_file");
    expect(call?.traceId).toBe(traceId);
    expect(call?.parentSpanId).toBe(parentId);
    expect(call?.links.map((l) => [l.traceId, l.spanId])).toEqual([[session?.traceId, session?.spanId]]);
    expect(call?.attributes["jsonrpc.request.id"]).toBe("7");
    expect(call?.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();

    const content = await run(["export", "--format", "otlp-json", "--envelope", join(work, "envelope"), "--include-content", path]);
    const withContent = content.stdout
      .split("\n")
      .filter((l) => l !== "")
      .flatMap(decodeJson)
      .find((s) => s.name === "execute_tool read_text_file");
    expect(JSON.parse(str(withContent?.attributes["gen_ai.tool.call.arguments"]))).toEqual(request.params.arguments);
    expect(JSON.parse(str(withContent?.attributes["gen_ai.tool.call.result"]))).toEqual(response.result);

    // Without the Envelope the record alone cannot say: the call stays in its Session's trace.
    const bare = await run(["export", "--format", "otlp-json", path]);
    const bareCall = bare.stdout
      .split("\n")
      .filter((l) => l !== "")
      .flatMap(decodeJson)
      .find((s) => s.name === "execute_tool read_text_file");
    expect(bareCall?.traceId).toBe(session?.traceId);
    expect(bareCall?.spanId).toBe(call?.spanId);
  });
});

describe("aegis export: OpenTelemetry is loaded only when an export runs", () => {
  // The bin's one file holds OpenTelemetry (ADR 0045); its chunks follow the packages' module
  // graph, which is read here, a module a file, through the packages themselves.
  // A module hook that refuses every @opentelemetry/* import: what runs without loading them passes.
  const hook = `data:text/javascript,${encodeURIComponent(
    `import { register } from "node:module"; register("data:text/javascript," + encodeURIComponent('export async function resolve(s, c, next) { if (s.startsWith("@opentelemetry/")) throw new Error("refused: " + s); return next(s, c); }'));`,
  )}`;

  it("verify, show and --help run without them; export says it could not load them", async () => {
    for (const args of [["verify", record], ["show", record], ["--help"], ["export", "--help"]]) {
      const r = await run(args, {}, ["--import", hook], UNBUNDLED);
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    const r = await run(["export", "--format", "otlp-json", record], {}, ["--import", hook], UNBUNDLED);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("error: OpenTelemetry: the OpenTelemetry packages could not be loaded (refused: @opentelemetry/");
  });
});
