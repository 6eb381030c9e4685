import { join } from "node:path";
import type { EnvelopeStore } from "@aegis/envelope";
import { ChainWriter } from "@aegis/format";
import { type Notice } from "../src/index.js";
import { McpRecorder, type FrameVerdict, type Gate, type Json } from "../src/internal.js";
import { KEY, openWriter, tempDir } from "./support.js";

/** A recorder over a real writer in a fresh directory; `close` finishes both. */
export async function session(options: { gate?: Gate; envelope?: EnvelopeStore } = {}) {
  const path = join(tempDir(), "record.aarl");
  const envelope = options.envelope;
  const writer = envelope === undefined ? await openWriter(path) : await ChainWriter.open(path, { key: KEY, envelope });
  const notices: Notice[] = [];
  const recorder = new McpRecorder({
    writer,
    ...(options.gate === undefined ? {} : { gate: options.gate }),
    ...(envelope === undefined ? {} : { toolSpecs: envelope }),
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
