import { OtlpSetupError, exportSpans, loadOtel, type SpanPlan } from "@aegis/mcp/internal";

/** The OpenTelemetry packages, loaded: what `loadOtel` gives. */
type OtelKit = Awaited<ReturnType<typeof loadOtel>>;
import { CliError } from "../fault.js";

/** Spans per OTLP request: the batching processor's default batch. */
const BATCH = 512;

/**
 * Send the spans over OTLP/HTTP, batch by batch, each delivered before the next is sent
 * (SPEC Appendix A.6). Resolves with the endpoint they went to.
 */
export async function sendSpans(kit: OtelKit, plans: readonly SpanPlan[]): Promise<string> {
  const exporter = kit.exporter();
  try {
    for (let i = 0; i < plans.length; i += BATCH) {
      const failed = await exportSpans(
        exporter,
        plans.slice(i, i + BATCH).map((p) => kit.span(p)),
      );
      if (failed !== undefined)
        throw new CliError({ code: "export", fault: { code: "delivery", endpoint: kit.endpoint, detail: failed, delivered: i, total: plans.length } });
    }
  } finally {
    await exporter.shutdown().catch(() => undefined);
    kit.close();
  }
  return kit.endpoint;
}

/**
 * The spans in the OTLP JSON file form (the Collector's file exporter and receiver): one
 * `ExportTraceServiceRequest` a line, of at most {@link BATCH} spans each.
 */
export function* spanLines(kit: OtelKit, plans: readonly SpanPlan[]): Generator<string> {
  for (let i = 0; i < plans.length; i += BATCH) yield `${kit.json(plans.slice(i, i + BATCH).map((p) => kit.span(p)))}\n`;
}

/**
 * The OpenTelemetry packages, loaded now (ADR 0024); with `network`, the exporter for the
 * protocol the environment asks for, refused before the record is read when it is not one.
 */
export async function loadKit(network: boolean): Promise<OtelKit> {
  try {
    return await loadOtel(process.env, network);
  } catch (error) {
    if (error instanceof OtlpSetupError) throw new CliError({ code: "export", fault: { code: "setup", detail: error.message } });
    throw error;
  }
}
