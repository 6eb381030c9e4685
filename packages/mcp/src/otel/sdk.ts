import type { ClientRequestArgs, Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { PassThrough, type Duplex } from "node:stream";
import { messageOf } from "@aegis/format/internal";
import type { HrTime, Link, SpanContext } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { SpanPlan } from "./spans.js";
import { MCP_VERSION } from "../version.js";
import { FaultError } from "@aegis/format";

/**
 * The official OpenTelemetry JS packages, loaded only when spans are to be exported (SPEC
 * Appendix A, ADR 0024): nothing that imports `@aegis/mcp` loads them otherwise, and
 * `@aegis/mcp` takes them as optional peer dependencies. Spans are built from a record's
 * Lines, not started and ended on a clock, so they are handed to the exporters as
 * `ReadableSpan`s with every id and time already decided.
 */

/** Why the OpenTelemetry export could not be set up. */
export class OtlpSetupError extends FaultError<{ readonly detail: string }> {
  constructor(detail: string) {
    super("OtlpSetupError", { detail }, (f) => f.detail);
  }
}

/** The OTLP protocols aegis exports over (`OTEL_EXPORTER_OTLP_PROTOCOL`): protobuf by default, as the OpenTelemetry specification says. */
type OtlpProtocol = "http/protobuf" | "http/json";

/** What aegis does with the OpenTelemetry packages once they are loaded. */
export interface OtelKit {
  /** The protocol the environment asks for; undefined when loaded for files only. */
  readonly protocol: OtlpProtocol | undefined;
  /** Where spans go, as the exporter works it out from the environment (for messages only). */
  readonly endpoint: string;
  /** The span the exporters take for a plan. */
  span(plan: SpanPlan): ReadableSpan;
  /**
   * An OTLP/HTTP exporter for `protocol`, configured by this process's standard
   * `OTEL_EXPORTER_OTLP_*` variables. Throws when loaded for files only.
   */
  exporter(): SpanExporter;
  /** A batching processor in front of `exporter` (`OTEL_BSP_*` variables): `onEnd` only queues. */
  batchProcessor(exporter: SpanExporter): SpanProcessor;
  /** Spans as one OTLP/JSON `ExportTraceServiceRequest`, one line of the Collector's file form. */
  json(spans: ReadableSpan[]): string;
  /**
   * End every connection the exporters opened, a request still in flight included: once
   * aegis has stopped waiting for the last spans, nothing of theirs may keep the process.
   */
  close(): void;
}

/** Export `spans` and wait for the exporter's answer: `undefined` when delivered, else why not. */
export function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    exporter.export(spans, (result) => resolve(result.code === 0 ? undefined : messageOf(result.error ?? new Error("the exporter reported a failure"))));
  });
}

/**
 * Load the OpenTelemetry packages; for the network (`network`), also the exporter for the
 * protocol `env` asks for.
 *
 * @throws OtlpSetupError when the packages are not installed, or the protocol is not one aegis exports over.
 */
export async function loadOtel(env: NodeJS.ProcessEnv, network: boolean): Promise<OtelKit> {
  const protocol = network ? protocolOf(env) : undefined;
  let modules;
  try {
    modules = await Promise.all([
      import("@opentelemetry/api"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/otlp-transformer"),
      // Node's HTTP, for the exporters' agents: imported here, not at start-up (https loads TLS).
      import("node:http"),
      import("node:https"),
      protocol === undefined
        ? undefined
        : protocol === "http/json"
          ? import("@opentelemetry/exporter-trace-otlp-http")
          : import("@opentelemetry/exporter-trace-otlp-proto"),
    ]);
  } catch (error) {
    throw new OtlpSetupError(
      `the OpenTelemetry packages could not be loaded (${messageOf(error)}): install @opentelemetry/api, @opentelemetry/resources, @opentelemetry/sdk-trace-base, @opentelemetry/otlp-transformer and @opentelemetry/exporter-trace-otlp-proto (or -http) beside @aegis/mcp`,
    );
  }
  const [api, resources, sdk, transformer, http, https, exporters] = modules;
  // service.name "aegis" unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
  const resource: Resource = resources
    .resourceFromAttributes({ "service.name": "aegis" })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  // The mapping is this package's: its spans name it, live or exported from a file alike.
  const scope = { name: "aegis", version: MCP_VERSION };
  const sampled = api.TraceFlags.SAMPLED;
  // The exporters' connections go through agents of ours, so that close() can end them.
  const agents: ClosableAgent[] = [];
  const agentFor = (urlProtocol: string): HttpAgent | HttpsAgent => {
    const closable = closableAgent(urlProtocol === "https:" ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true }));
    agents.push(closable);
    return closable.agent;
  };
  const context = (traceId: string, spanId: string, isRemote: boolean): SpanContext => ({ traceId, spanId, traceFlags: sampled, isRemote });
  return {
    protocol,
    endpoint: endpointOf(env),
    span(plan) {
      const own = context(plan.traceId, plan.spanId, false);
      const startTime = hrTime(plan.startMs);
      const endTime = hrTime(plan.endMs);
      const links: Link[] = plan.links.map((l) => ({ context: context(l.context.traceId, l.context.spanId, false), attributes: { ...l.attributes } }));
      return {
        name: plan.name,
        kind: api.SpanKind.INTERNAL,
        spanContext: () => own,
        ...(plan.parent === undefined ? {} : { parentSpanContext: context(plan.parent.traceId, plan.parent.spanId, plan.parent.remote) }),
        startTime,
        endTime,
        duration: hrTime(plan.endMs - plan.startMs),
        status: plan.status.code === "error" ? { code: api.SpanStatusCode.ERROR, message: plan.status.message } : { code: api.SpanStatusCode.UNSET },
        attributes: { ...plan.attributes },
        links,
        events: [],
        ended: true,
        resource,
        instrumentationScope: scope,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
      };
    },
    exporter: () => {
      if (exporters === undefined) throw new OtlpSetupError("the OpenTelemetry packages were loaded for files only");
      return new exporters.OTLPTraceExporter({ httpAgentOptions: agentFor });
    },
    batchProcessor: (exporter) => new sdk.BatchSpanProcessor(exporter),
    json(spans) {
      const bytes = transformer.JsonTraceSerializer.serializeRequest(spans);
      return bytes === undefined ? "" : Buffer.from(bytes).toString("utf8");
    },
    close() {
      for (const agent of agents.splice(0)) agent.close();
    },
  };
}

/** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. */
function protocolOf(env: NodeJS.ProcessEnv): OtlpProtocol {
  const given = (env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] ?? env["OTEL_EXPORTER_OTLP_PROTOCOL"] ?? "").trim();
  if (given === "" || given === "http/protobuf") return "http/protobuf";
  if (given === "http/json") return "http/json";
  throw new OtlpSetupError(`OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(given)} is not one aegis exports over: use http/protobuf (the default) or http/json`);
}

/** The traces endpoint as the OTLP/HTTP exporters work it out (OpenTelemetry's exporter specification). */
function endpointOf(env: NodeJS.ProcessEnv): string {
  const traces = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim();
  if (traces !== undefined && traces !== "") return traces;
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim();
  if (base !== undefined && base !== "") return `${base.replace(/\/+$/, "")}/v1/traces`;
  return "http://localhost:4318/v1/traces";
}

function hrTime(ms: number): HrTime {
  const whole = Math.floor(ms);
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000];
}

interface ClosableAgent {
  readonly agent: HttpAgent | HttpsAgent;
  close(): void;
}

/**
 * An agent whose connections aegis can end. Closing it fails the request in flight, and any
 * later one, with an error that has no `code`: the OTLP exporter retries only on network
 * error codes, so it gives up at once instead of holding the process through its backoff.
 */
function closableAgent(agent: HttpAgent | HttpsAgent): ClosableAgent {
  const closedError = (): Error => new Error("aegis stopped waiting for the OpenTelemetry endpoint");
  let closed = false;
  const connect = agent.createConnection.bind(agent);
  agent.createConnection = (options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) => {
    if (!closed) return connect(options, callback);
    const none = new PassThrough();
    none.destroy();
    process.nextTick(() => callback?.(closedError(), none));
    return undefined;
  };
  return {
    agent,
    close() {
      closed = true;
      for (const sockets of [...Object.values(agent.sockets), ...Object.values(agent.freeSockets)])
        for (const socket of sockets ?? []) socket.destroy(closedError());
    },
  };
}
