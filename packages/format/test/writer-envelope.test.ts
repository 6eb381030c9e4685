import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordWriter, RecordWriterError, RequestDigest, ResponseDigest, type EnvelopeSink, type WriterFault } from "../src/index.js";
import { DEV, POLICY, readLines, tempDir } from "./support/chains.js";
import { faultOf as sharedFaultOf } from "./support/faults.js";
import { verifyChainFile } from "../src/verify/verify-record.js";

const faultOf = (promise: Promise<unknown>): Promise<WriterFault> => sharedFaultOf(promise, RecordWriterError);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const ended = {
  policy: { status: "allowed" as const },
  capability: { status: "denied" as const, reason: "n/a" },
  execution: { status: "success" as const },
  decision_axes: {},
};

/**
 * An Envelope double that records what the file held at the moment each put was asked
 * for: the order "bytes kept, then Line written" is what makes every digest in a record
 * retrievable after a crash. While the test holds it, a put is asked for and does not answer
 * until released, so a test can act while a put is provably in progress (no sleep to widen
 * the window: the window is pinned open).
 */
class WatchingSink implements EnvelopeSink {
  readonly kept = new Map<string, Uint8Array>();
  readonly fileAtPut: string[] = [];
  refuse: "request" | "response" | undefined;
  private released: Promise<void> | undefined;
  private askedWaiters: { readonly count: number; readonly resolve: () => void }[] = [];
  constructor(private readonly path: string) {}

  putRequest(data: Uint8Array): Promise<RequestDigest> {
    return this.put(data, "request", RequestDigest.of);
  }

  putResponse(data: Uint8Array): Promise<ResponseDigest> {
    return this.put(data, "response", ResponseDigest.of);
  }

  /** Hold every put from now on; the function returned releases them. */
  hold(): () => void {
    let release = (): void => undefined;
    this.released = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.released = undefined;
      release();
    };
  }

  /** Resolves once `count` puts have been asked for in all. */
  asked(count: number): Promise<void> {
    if (this.fileAtPut.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.askedWaiters.push({ count, resolve }));
  }

  private async put<D extends string>(data: Uint8Array, part: "request" | "response", hash: (b: Uint8Array) => D): Promise<D> {
    this.fileAtPut.push(readFileSync(this.path, "utf8"));
    for (const waiter of this.askedWaiters.filter((w) => w.count <= this.fileAtPut.length)) waiter.resolve();
    // Always answer on a later turn, as a disk does; held, only when the test says.
    await (this.released ?? Promise.resolve());
    if (this.refuse === part) throw new Error("disk full");
    const digest = hash(data);
    this.kept.set(digest, data);
    return digest;
  }
}

async function openWith(name: string): Promise<{ writer: RecordWriter; sink: WatchingSink; path: string }> {
  const path = join(tempDir(), name);
  const sink = new WatchingSink(path);
  // The sink reads the file, so it must exist before the first put.
  const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true, envelope: sink });
  return { writer, sink, path };
}

describe("a writer given an Envelope (SPEC §9)", () => {
  it("puts the request bytes before the intent that names them, and the response before the outcome", async () => {
    const { writer, sink, path } = await openWith("e1.aarl");
    await writer.beginCall({ call_id: "c1", tool_id: "t", policy_set_hash: POLICY, request: bytes('{"q":1}') });
    await writer.endCall("c1", { ...ended, response: bytes("ok") });
    await writer.close();
    expect(sink.fileAtPut[0]).not.toContain('"call_id":"c1"');
    expect(sink.fileAtPut[1]).not.toContain('"line_type":"outcome"');
    const [intent, outcome] = readLines(path).filter((l) => l["call_id"] === "c1");
    expect(intent).toMatchObject({ line_type: "intent", request_digest: RequestDigest.of(bytes('{"q":1}')) });
    expect(outcome).toMatchObject({
      line_type: "outcome",
      request_digest: RequestDigest.of(bytes('{"q":1}')),
      response_digest: ResponseDigest.of(bytes("ok")),
    });
    expect([...sink.kept.keys()].sort()).toEqual([RequestDigest.of(bytes('{"q":1}')), ResponseDigest.of(bytes("ok"))].sort());
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });

  it("hashes request bytes itself when no Envelope is given", async () => {
    const path = join(tempDir(), "e2.aarl");
    const writer = await RecordWriter.open(path, { key: DEV, allowInsecureDevKey: true });
    await writer.call({ call_id: "c2", tool_id: "t", policy_set_hash: POLICY, request: bytes("raw") }, () =>
      Promise.resolve({ value: 1, outcome: { ...ended, response: bytes("out") } }),
    );
    await writer.close();
    const outcome = readLines(path).find((l) => l["line_type"] === "outcome");
    expect(outcome).toMatchObject({ request_digest: RequestDigest.of(bytes("raw")), response_digest: ResponseDigest.of(bytes("out")) });
  });

  it("an Envelope that refuses the request: no intent is written and the call never starts", async () => {
    const { writer, sink, path } = await openWith("e3.aarl");
    sink.refuse = "request";
    const fault = await faultOf(writer.beginCall({ call_id: "c3", tool_id: "t", policy_set_hash: POLICY, request: bytes("x") }));
    expect(fault).toMatchObject({ code: "envelope", part: "request", detail: "disk full" });
    expect(writer.inFlight).toEqual([]);
    await writer.close();
    expect(readLines(path).map((l) => l["line_type"])).toEqual(["open", "close"]);
  });

  it("an Envelope that refuses the response: the outcome is still written, and the caller is told", async () => {
    const { writer, sink, path } = await openWith("e4.aarl");
    await writer.beginCall({ call_id: "c4", tool_id: "t", policy_set_hash: POLICY, request: bytes("x") });
    sink.refuse = "response";
    const fault = await faultOf(writer.endCall("c4", { ...ended, response: bytes("lost") }));
    expect(fault).toMatchObject({ code: "envelope", part: "response" });
    await writer.close();
    const outcome = readLines(path).find((l) => l["line_type"] === "outcome");
    expect(outcome).toMatchObject({ call_id: "c4", response_digest: ResponseDigest.of(bytes("lost")), execution: { status: "success" } });
  });

  it("close() waits for an outcome whose response is still being put, instead of abandoning it", async () => {
    const { writer, sink, path } = await openWith("e5.aarl");
    await writer.beginCall({ call_id: "c5", tool_id: "t", policy_set_hash: POLICY, request: bytes("x") });
    const release = sink.hold();
    const ending = writer.endCall("c5", { ...ended, response: bytes("late") });
    await sink.asked(2);
    // The response's put is in progress, and stays so until released: close() now.
    const closing = writer.close();
    release();
    await closing;
    await ending;
    const lines = readLines(path);
    expect(lines.map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "close"]);
    expect(lines[2]).toMatchObject({ call_id: "c5", execution: { status: "success" } });
  });

  it("an id is taken while its response is put: beginning it again is refused, and the first call's outcome is kept", async () => {
    const { writer, sink, path } = await openWith("e6.aarl");
    await writer.beginCall({ call_id: "x", tool_id: "t", policy_set_hash: POLICY, request: bytes("1") });
    const release = sink.hold();
    const ending = writer.endCall("x", { ...ended, response: bytes("slow") });
    await sink.asked(2);
    expect((await faultOf(writer.beginCall({ call_id: "x", tool_id: "t", policy_set_hash: POLICY, request: bytes("2") }))).code).toBe("duplicate_call");
    release();
    await ending;
    await writer.close();
    expect(readLines(path).map((l) => `${String(l["line_type"])}${l["call_id"] === undefined ? "" : ` ${String(l["call_id"])}`}`)).toEqual([
      "open",
      "intent x",
      "outcome x",
      "close",
    ]);
  });

  it("close() while a request is being put: the call's intent lands and close() records it as abandoned", async () => {
    const { writer, sink, path } = await openWith("e7.aarl");
    const release = sink.hold();
    const begun = writer.beginCall({ call_id: "late", tool_id: "t", policy_set_hash: POLICY, request: bytes("r") });
    await sink.asked(1);
    const closing = writer.close();
    release();
    await closing;
    await begun;
    const lines = readLines(path);
    expect(lines.map((l) => l["line_type"])).toEqual(["open", "intent", "outcome", "close"]);
    expect(lines[2]).toMatchObject({ call_id: "late", execution: { status: "host_denied", reason: "session abandoned" } });
  });

  it("endCall after close() has begun: the call already has its abandoned outcome, once; the late end is refused", async () => {
    const { writer, path } = await openWith("e8.aarl");
    await writer.beginCall({ call_id: "y", tool_id: "t", policy_set_hash: POLICY, request: bytes("r") });
    const closing = writer.close();
    const late = faultOf(writer.endCall("y", { ...ended, response: bytes("too late") }));
    await closing;
    expect((await late).code).toBe("unknown_call");
    expect(readLines(path).filter((l) => l["line_type"] === "outcome")).toHaveLength(1);
    expect((await verifyChainFile(path)).verdict.status).toBe("verified");
  });
});
