import { join } from "node:path";
import type { EnvelopeStore } from "@aegis/envelope";
import { RecordWriter } from "@aegis/format";
import { type RefusalStyle } from "../src/index.js";
import { REFUSAL_META_KEY } from "../src/refusal.js";
import { type Notice } from "../src/notice.js";
import { McpRecorder, type Gate } from "../src/internal.js";
import { type Json } from "../src/message.js";
import { type FrameVerdict } from "../src/frame-verdict.js";
import { KEY, openWriter, tempDir } from "./support.js";

/** A recorder over a real writer in a fresh directory; `close` finishes both. */
export async function session(options: { gate?: Gate; envelope?: EnvelopeStore; refusal?: RefusalStyle } = {}) {
  const path = join(tempDir(), "record.aarl");
  const envelope = options.envelope;
  const writer = envelope === undefined ? await openWriter(path) : await RecordWriter.open(path, { key: KEY, envelope });
  const notices: Notice[] = [];
  const recorder = new McpRecorder({
    writer,
    ...(options.gate === undefined ? {} : { gate: options.gate }),
    ...(envelope === undefined ? {} : { toolSpecs: envelope }),
    ...(options.refusal === undefined ? {} : { refusal: options.refusal }),
    onNotice: (n) => notices.push(n),
  });
  const close = async (why: Parameters<McpRecorder["finish"]>[0] = { code: "child_exited" }) => {
    await recorder.finish(why);
    await writer.close();
  };
  return { path, writer, recorder, notices, close };
}

export const answerOf = (verdict: FrameVerdict): Json => {
  if (verdict.code !== "answer" && verdict.code !== "failed") throw new Error(`expected an answer, got ${verdict.code}`);
  return JSON.parse(verdict.frame?.toString("utf8") ?? "null") as Json;
};

/**
 * The facts of a refusal (SPEC §17.3), wherever its form keeps them: the `_meta` member of a
 * tool result, or `data.aegis` of a JSON-RPC error.
 */
export const refusalOf = (answer: Json): Record<string, Json> => {
  const message = answer as { result?: { _meta?: Record<string, Record<string, Json>> }; error?: { data?: { aegis?: Record<string, Json> } } };
  const facts = message.result?._meta?.[REFUSAL_META_KEY] ?? message.error?.data?.aegis;
  if (facts === undefined) throw new Error(`not a refusal: ${JSON.stringify(answer)}`);
  return facts;
};
