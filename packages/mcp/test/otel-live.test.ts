import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { OtlpCollector, decodeJson, type ReceivedSpan } from "./otlp-collector.js";
import { BIN, FILESYSTEM_SERVER, outcomes, verdictOf } from "./support.js";
import { workspace } from "./wrap-process.js";

/**
 * `aegis wrap --otlp` in front of the official filesystem server, driven by the SDK's client:
 * each call's span reaches a local OTLP/HTTP endpoint while the Session goes on, and an
 * endpoint that is down changes nothing a client or the record sees.
 */

const collectors: OtlpCollector[] = [];
afterEach(async () => {
  for (const c of collectors.splice(0)) await c.close();
});

async function wrapClient(args: readonly string[], env: Record<string, string>, stderr: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "wrap", ...args],
    env: { ...(process.env as Record<string, string>), AEGIS_DEBUG: "", ...env },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const client = new Client({ name: "otel-live", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

function callSpan(spans: readonly ReceivedSpan[], callId: string): ReceivedSpan | undefined {
  return spans.find((s) => s.attributes["gen_ai.tool.call.id"] === callId);
}

describe("aegis wrap --otlp, against @modelcontextprotocol/server-filesystem", () => {
  it("each call's span arrives while the Session runs; a traceparent in params._meta is its parent; aegis export gives the same spans", async () => {
    const collector = await OtlpCollector.start();
    collectors.push(collector);
    const w = await workspace();
    const data = join(w.dir, "data");
    mkdirSync(data);
    writeFileSync(join(data, "notes.md"), "ship on friday\n");
    const envelope = join(w.dir, "envelope");
    const stderr: string[] = [];
    const client = await wrapClient(
      ["--audit", w.audit, "--signing-key", w.key, "--envelope", envelope, "--otlp", "--", process.execPath, FILESYSTEM_SERVER, data],
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: "50" },
      stderr,
    );

    const read = await client.callTool({ name: "read_text_file", arguments: { path: join(data, "notes.md") } });
    expect(JSON.stringify(read.content)).toContain("ship on friday");
    // The span of the first call arrives before the next call is made, wrap still running.
    await collector.waitFor((spans) => callSpan(spans, "call-1") !== undefined);
    expect(collector.spans.some((s) => s.name === "aegis session")).toBe(false);
    const first = callSpan(collector.spans, "call-1");
    expect(first?.name).toBe("execute_tool read_text_file");
    expect(first?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "read_text_file",
      "mcp.method.name": "tools/call",
      "aegis.policy.status": "allowed",
      "aegis.execution.status": "success",
    });
    expect(first?.status.code).toBe(0);
    expect(first?.attributes["gen_ai.tool.call.result"]).toBeUndefined();

    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const parentId = "b7ad6b7169203331";
    await client.callTool({ name: "read_text_file", arguments: { path: join(data, "notes.md") }, _meta: { traceparent: `00-${traceId}-${parentId}-01` } });
    await collector.waitFor((spans) => callSpan(spans, "call-2") !== undefined);
    const traced = callSpan(collector.spans, "call-2");
    expect(traced?.traceId).toBe(traceId);
    expect(traced?.parentSpanId).toBe(parentId);
    expect(traced?.links.map((l) => l.spanId)).toContain(first?.parentSpanId);

    // The server's refusal (outside its allowed directory) is a tool error in the answer.
    const outside = await client.callTool({ name: "read_text_file", arguments: { path: "/etc/hostname" } });
    expect(outside.isError).toBe(true);
    await collector.waitFor((spans) => callSpan(spans, "call-3") !== undefined);
    expect(callSpan(collector.spans, "call-3")?.attributes["error.type"]).toBe("tool_error");
    expect(callSpan(collector.spans, "call-3")?.status.code).toBe(2);

    await client.close();
    await collector.waitFor((spans) => spans.some((s) => s.name === "aegis session"));
    expect(await verdictOf(w.audit)).toBe("verified");
    expect(outcomes(w.audit)).toHaveLength(3);

    // The record exported afterwards: the same spans, ids and times, but for the Session's
    // index in the file, which only a reader of the whole file knows.
    const exported = spawnSync(process.execPath, [BIN, "export", "--format", "otlp-json", "--envelope", envelope, w.audit], { encoding: "utf8" });
    expect(exported.status, exported.stderr).toBe(0);
    const fromFile = exported.stdout
      .split("\n")
      .filter((l) => l !== "")
      .flatMap(decodeJson);
    expect(fromFile).toHaveLength(collector.spans.length);
    for (const live of collector.spans) {
      const file = fromFile.find((s) => s.spanId === live.spanId);
      const { ["aegis.session.index"]: index, ...attributes } = file?.attributes ?? {};
      expect(index).toBe(0);
      expect(live.attributes["aegis.session.index"]).toBeUndefined();
      expect(live).toEqual({ ...file, attributes });
    }
  });

  it("with the endpoint down, every call completes, wrap says so on stderr, and the record is Verified", async () => {
    const down = await OtlpCollector.start();
    const endpoint = down.endpoint;
    await down.close();
    const w = await workspace();
    const data = join(w.dir, "data");
    mkdirSync(data);
    writeFileSync(join(data, "notes.md"), "ship on friday\n");
    const stderr: string[] = [];
    const client = await wrapClient(
      ["--audit", w.audit, "--signing-key", w.key, "--otlp", "--otlp-content", "--", process.execPath, FILESYSTEM_SERVER, data],
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "10", OTEL_EXPORTER_OTLP_TIMEOUT: "500" },
      stderr,
    );
    for (let i = 0; i < 5; i += 1) {
      const r = await client.callTool({ name: "read_text_file", arguments: { path: join(data, "notes.md") } });
      expect(JSON.stringify(r.content)).toContain("ship on friday");
    }
    await client.close();
    expect(outcomes(w.audit)).toHaveLength(5);
    expect(await verdictOf(w.audit)).toBe("verified");
    expect(stderr.join("")).toContain(`aegis wrap: OpenTelemetry: spans were not delivered to ${endpoint}/v1/traces`);
  });

  it("an endpoint that never answers: the calls do not wait for it", async () => {
    const hung = await OtlpCollector.start({ hang: true });
    collectors.push(hung);
    const w = await workspace();
    const data = join(w.dir, "data");
    mkdirSync(data);
    writeFileSync(join(data, "notes.md"), "ship on friday\n");
    const client = await wrapClient(
      ["--audit", w.audit, "--signing-key", w.key, "--otlp", "--", process.execPath, FILESYSTEM_SERVER, data],
      { OTEL_EXPORTER_OTLP_ENDPOINT: hung.endpoint, OTEL_BSP_SCHEDULE_DELAY: "10", OTEL_EXPORTER_OTLP_TIMEOUT: "1000" },
      [],
    );
    // Each call is answered while the exporter's requests hang: the export is off their path.
    for (let i = 0; i < 5; i += 1) await client.callTool({ name: "read_text_file", arguments: { path: join(data, "notes.md") } });
    await client.close();
    expect(outcomes(w.audit)).toHaveLength(5);
    expect(await verdictOf(w.audit)).toBe("verified");
  });

  it("a protocol aegis does not export over: wrap does not start the server, exit 1, no record", async () => {
    const w = await workspace();
    const marker = join(w.dir, "server-ran");
    const r = spawnSync(process.execPath, [BIN, "wrap", "--audit", w.audit, "--signing-key", w.key, "--otlp", "--", "/bin/sh", "-c", `touch ${marker}`], {
      encoding: "utf8",
      env: { ...process.env, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('error: --otlp: OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not one aegis exports over');
    expect(existsSync(w.audit)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it("--otlp-content without --otlp: a usage error, exit 1", async () => {
    const w = await workspace();
    const r = spawnSync(process.execPath, [BIN, "wrap", "--audit", w.audit, "--signing-key", w.key, "--otlp-content", "--", "true"], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("error: --otlp-content is read only with --otlp");
    expect(existsSync(w.audit)).toBe(false);
  });
});
