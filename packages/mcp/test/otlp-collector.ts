import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { Socket } from "node:net";

/**
 * A stand-in for an OpenTelemetry Collector's OTLP/HTTP receiver, on 127.0.0.1: it takes
 * `POST /v1/traces` in both protocols and keeps every span it was sent. Protobuf is decoded
 * with the decoder protobufjs generated from the OTLP definitions, as shipped in
 * `@opentelemetry/otlp-transformer` 0.208 (installed as `otlp-transformer-protobufjs`): not
 * with the encoder under test, which since 0.217 is a writer of OpenTelemetry's own.
 */

/** An attribute's value, as the tests compare them. */
type Value = string | number | boolean;

/** One span as received, the same shape whatever the wire form. */
export interface ReceivedSpan {
  readonly resource: Readonly<Record<string, Value>>;
  readonly scope: { readonly name: string; readonly version: string };
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty when the span has no parent. */
  readonly parentSpanId: string;
  readonly startNs: string;
  readonly endNs: string;
  readonly status: { readonly code: number; readonly message: string };
  readonly attributes: Readonly<Record<string, Value>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string; readonly attributes: Readonly<Record<string, Value>> }[];
}

/** A request as received: where, what, and the headers an exporter sent. */
export interface ReceivedRequest {
  readonly path: string;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly spans: number;
}

// The OTLP request as protobufjs's toObject and as OTLP/JSON write it; ids are base64 in the
// first and hex in the second, and 64-bit integers strings or numbers.
interface OtlpValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly boolValue?: boolean;
  readonly doubleValue?: number;
}
interface OtlpKeyValue {
  readonly key: string;
  readonly value?: OtlpValue;
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind?: number;
  readonly startTimeUnixNano: string | number;
  readonly endTimeUnixNano: string | number;
  readonly attributes?: readonly OtlpKeyValue[];
  readonly links?: readonly { readonly traceId: string; readonly spanId: string; readonly attributes?: readonly OtlpKeyValue[] }[];
  readonly status?: { readonly code?: number; readonly message?: string };
}
/** An `ExportTraceServiceRequest`, or one line of the Collector's file form. */
interface OtlpRequest {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly OtlpKeyValue[] };
    readonly scopeSpans?: readonly { readonly scope?: { readonly name?: string; readonly version?: string }; readonly spans?: readonly OtlpSpan[] }[];
  }[];
}

interface MessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
const generated = createRequire(import.meta.url)("otlp-transformer-protobufjs/build/src/generated/root.js") as {
  readonly opentelemetry: { readonly proto: { readonly collector: { readonly trace: { readonly v1: { readonly ExportTraceServiceRequest: MessageType } } } } };
};
const REQUEST = generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/** Decode an OTLP/HTTP protobuf body with the generated OTLP decoder. */
function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const object = REQUEST.toObject(REQUEST.decode(body), { longs: String, bytes: String, enums: Number, defaults: false }) as OtlpRequest;
  return spansOf(object, (id) => Buffer.from(id, "base64").toString("hex"));
}

/** Read an OTLP/JSON body (or a line of the file form): ids are hex there. */
export function decodeJson(text: string): ReceivedSpan[] {
  return spansOf(JSON.parse(text) as OtlpRequest, (id) => id);
}

function spansOf(request: OtlpRequest, hex: (id: string) => string): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = valuesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          resource,
          scope: { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" },
          name: s.name,
          kind: s.kind ?? 0,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? "" : hex(s.parentSpanId),
          startNs: String(s.startTimeUnixNano),
          endNs: String(s.endTimeUnixNano),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          attributes: valuesOf(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: valuesOf(l.attributes) })),
        });
      }
    }
  }
  return out;
}

function valuesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    if (v.stringValue !== undefined) out[kv.key] = v.stringValue;
    else if (v.intValue !== undefined) out[kv.key] = Number(v.intValue);
    else if (v.boolValue !== undefined) out[kv.key] = v.boolValue;
    else if (v.doubleValue !== undefined) out[kv.key] = v.doubleValue;
  }
  return out;
}

/** An OTLP/HTTP receiver on 127.0.0.1; `hang` takes requests and never answers them. */
export class OtlpCollector {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: ReceivedRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
    readonly endpoint: string,
  ) {
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
  }

  static async start(options: { readonly hang?: boolean } = {}): Promise<OtlpCollector> {
    let collector: OtlpCollector | undefined;
    const server = createServer((req, res) => void collector?.take(req, res, options.hang === true));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    collector = new OtlpCollector(server, `http://127.0.0.1:${address.port}`);
    return collector;
  }

  /** Wait until the spans received satisfy `done`; bounded, so a test fails instead of hanging. */
  async waitFor(done: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.spans)) {
      if (Date.now() > deadline)
        throw new Error(`the collector did not get the spans waited for; it has ${this.spans.length}: ${this.spans.map((s) => s.name).join(", ")}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async take(req: IncomingMessage, res: ServerResponse, hang: boolean): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (hang) return;
    const body = Buffer.concat(chunks);
    const contentType = req.headers["content-type"] ?? "";
    let spans: ReceivedSpan[] = [];
    let ok = req.method === "POST" && req.url === "/v1/traces";
    try {
      if (ok) spans = contentType.includes("protobuf") ? decodeProtobuf(body) : decodeJson(body.toString("utf8"));
    } catch {
      ok = false;
    }
    this.requests.push({ path: req.url ?? "", contentType, headers: { ...req.headers }, spans: spans.length });
    this.spans.push(...spans);
    // An empty ExportTraceServiceResponse, in the form asked in.
    res.writeHead(ok ? 200 : 400, { "content-type": contentType.includes("protobuf") ? "application/x-protobuf" : "application/json" });
    res.end(contentType.includes("protobuf") ? Buffer.alloc(0) : "{}");
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
