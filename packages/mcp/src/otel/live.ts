import { RequestDigest, ResponseDigest, type AppendedLine, type EnvelopeSink } from "@aegis/format";
import { isJsonObject, messageOf, parseJson } from "@aegis/format/internal";
import type { ReadableSpan, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { requestFacts, responseFacts } from "./facts.js";
import { RecordFollower, type CallRecord } from "./follow.js";
import type { OtlpOptions } from "./options.js";
import { loadOtel, type OtelKit } from "./sdk.js";
import { settlesWithin } from "../bounded.js";
import { SpanPlanner, type SpanPlan, type Untimed } from "./spans.js";

/** How long the last spans may take to leave once the Session is closed: inside the 2 s an MCP client gives wrap before SIGTERM (SPEC §17.7). */
const SHUTDOWN_MS = 1500;

/**
 * The live export of a writer's Lines (SPEC Appendix A.5): each Line is taken as the writer
 * appends it (`onLine`), followed once it is durable, and each call's span goes to a batching
 * processor when its outcome is on disk. Nothing here is on a call's path: `onLine` only
 * queues, the processor only buffers, and the exporter sends on its own timer. A failure here
 * is said on stderr and never reaches the record.
 */
export class LiveExport {
  private readonly follower: RecordFollower;
  private readonly planner = new SpanPlanner();
  /** Request and response bytes the writer was given, by digest, until the Line naming them is followed. */
  private readonly held = new Map<string, { readonly bytes: Uint8Array; refs: number }>();
  private queue: Promise<void> = Promise.resolve();
  private failed = 0;
  private untimed = false;

  private constructor(
    private readonly kit: OtelKit,
    private readonly exporter: CountingExporter,
    private readonly processor: SpanProcessor,
    private readonly options: OtlpOptions,
    private readonly say: (text: string) => void,
  ) {
    this.follower = new RecordFollower({
      call: (call) => this.emit(this.callPlan(call)),
      session: (session) => this.emit(this.planner.session(session)),
    });
  }

  /**
   * Load OpenTelemetry and start the exporter for this process's `OTEL_EXPORTER_OTLP_*`
   * variables. Nothing is sent yet; an endpoint that is down is found (and said) later.
   *
   * @throws OtlpSetupError when the packages are missing or the protocol is not supported.
   */
  static async start(options: OtlpOptions, say: (text: string) => void): Promise<LiveExport> {
    const kit = await loadOtel(process.env, true);
    let exporter: CountingExporter | undefined;
    exporter = new CountingExporter(kit.exporter(), (error) => {
      if (exporter?.failures === 1) say(`OpenTelemetry: spans were not delivered to ${kit.endpoint} (${error}); the record is not affected`);
    });
    const live = new LiveExport(kit, exporter, kit.batchProcessor(exporter), options, say);
    say(`OpenTelemetry: each call's span goes to ${kit.endpoint} (${kit.protocol ?? ""}) as the call ends`);
    return live;
  }

  /** For the writer's `onLine`: queues the Line, to be followed once it is durable. Never throws. */
  readonly onLine = (line: AppendedLine): void => {
    this.queue = this.queue.then(async () => {
      try {
        if (await line.durable) this.follow(line);
      } catch (error) {
        this.fault(error);
      }
    });
  };

  /**
   * The Envelope sink to give the writer: `inner`'s, when there is one, that also keeps each
   * request's and response's bytes here until the Line naming them is followed, so that a
   * span can read a `traceparent` and the JSON-RPC id. Without `inner`, the bytes are kept
   * nowhere else, as without an Envelope.
   */
  sink(inner: EnvelopeSink | undefined): EnvelopeSink {
    const keep = async <D extends string>(bytes: Uint8Array, digest: D, put: (() => Promise<D>) | undefined): Promise<D> => {
      this.hold(digest, bytes);
      try {
        return put === undefined ? digest : await put();
      } catch (error) {
        this.take(digest);
        throw error;
      }
    };
    return {
      putRequest: (bytes) => keep(bytes, RequestDigest.of(bytes), inner === undefined ? undefined : () => inner.putRequest(bytes)),
      putResponse: (bytes) => keep(bytes, ResponseDigest.of(bytes), inner === undefined ? undefined : () => inner.putResponse(bytes)),
    };
  }

  /**
   * After the record is closed: follow what is left, then give the processor a bounded time
   * to send the last spans. Never throws, never waits longer than that.
   */
  async shutdown(): Promise<void> {
    await this.queue;
    try {
      this.follower.end();
    } catch (error) {
      this.fault(error);
    }
    this.held.clear();
    // A failed export is counted (and said) by the exporter; the processor's rejection repeats it.
    const done = this.processor.shutdown().catch(() => undefined);
    const timedOut = !(await settlesWithin(done, SHUTDOWN_MS));
    this.kit.close();
    if (timedOut) this.say(`OpenTelemetry: the last spans were still being sent after ${SHUTDOWN_MS / 1000} s; they were dropped`);
    if (this.exporter.failures > 0) this.say(`OpenTelemetry: ${this.exporter.failures} export(s) to ${this.kit.endpoint} failed; the record is complete`);
  }

  private follow(line: AppendedLine): void {
    const value = parseJson(line.text);
    if (isJsonObject(value)) this.follower.line({ value, lineHash: line.lineHash });
  }

  private callPlan(call: CallRecord): SpanPlan | Untimed {
    const request = this.take(call.requestDigest);
    const responseDigest = call.outcome?.line.response_digest;
    const response = responseDigest === undefined ? undefined : this.take(responseDigest);
    const requestRead = request === undefined ? undefined : requestFacts(request);
    return this.planner.call(call, {
      ...(requestRead === undefined ? {} : { request: requestRead }),
      ...(response === undefined ? {} : { response: responseFacts(response, requestRead?.idKey) }),
      content: this.options.content === true,
    });
  }

  private emit(plan: SpanPlan | Untimed): void {
    if ("code" in plan) {
      if (!this.untimed) this.say("OpenTelemetry: a Line carries no time, so its span was not exported");
      this.untimed = true;
      return;
    }
    this.processor.onEnd(this.kit.span(plan));
  }

  private hold(digest: string, bytes: Uint8Array): void {
    const held = this.held.get(digest);
    if (held === undefined) this.held.set(digest, { bytes, refs: 1 });
    else held.refs += 1;
  }

  private take(digest: string): Uint8Array | undefined {
    const held = this.held.get(digest);
    if (held === undefined) return undefined;
    held.refs -= 1;
    if (held.refs <= 0) this.held.delete(digest);
    return held.bytes;
  }

  private fault(error: unknown): void {
    this.failed += 1;
    if (this.failed === 1) this.say(`OpenTelemetry: a span could not be made (${messageOf(error)}); the record is not affected`);
  }
}

/** The OTLP exporter, counting the exports that failed so that wrap can say so. */
class CountingExporter implements SpanExporter {
  failures = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: (error: string) => void,
  ) {}

  export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter["export"]>[1]): void {
    this.inner.export(spans, (result) => {
      if (result.code !== 0) {
        this.failures += 1;
        this.onFailure(messageOf(result.error ?? new Error("the exporter reported a failure")));
      }
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
