import { PassThrough, Writable } from "node:stream";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runWrap } from "../src/index.js";
import { FrameSplitter, isBlankFrame, type FrameEvent } from "../src/frames.js";
import { KEY, MIRROR, call, linesOf, sha256, tempDir } from "./support.js";

/** What the frames of a byte stream are, by definition (SPEC §17.1): split at every `\n`. */
function byDefinition(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      frames.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < bytes.length) frames.push(bytes.subarray(start));
  return frames;
}

function split(chunks: readonly Buffer[], max?: number): FrameEvent[] {
  const splitter = new FrameSplitter(max);
  const events = chunks.flatMap((c) => splitter.push(c));
  const last = splitter.end();
  return last === undefined ? events : [...events, last];
}

const bytesWithNewlines = fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a.map((b) => (b % 7 === 0 ? 0x0a : b))));

describe("framing (SPEC §17.1)", () => {
  it("[M17.1] yields every frame's bytes as they came, however the stream is cut into chunks", () => {
    fc.assert(
      fc.property(bytesWithNewlines, fc.array(fc.nat(400), { maxLength: 8 }), (bytes, cuts) => {
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((p, i) => bytes.subarray(p, points[i] ?? bytes.length));
        const frames = split(chunks).map((e) => (e.code === "frame" ? e.bytes : Buffer.alloc(0)));
        expect(frames.map((f) => f.toString("hex"))).toEqual(byDefinition(bytes).map((f) => f.toString("hex")));
      }),
    );
  });

  it("drops a frame over the bound as it arrives, reports its length and digest, and reads on", () => {
    const events = split([Buffer.from("ok\nxxx"), Buffer.from("xx"), Buffer.from("xxxxx\nafter")], 8);
    expect(events).toEqual([
      { code: "frame", bytes: Buffer.from("ok") },
      { code: "oversize", bytes: 10, sha256: sha256("xxxxxxxxxx") },
      { code: "frame", bytes: Buffer.from("after") },
    ]);
  });

  it("calls a frame of ASCII white space blank, and nothing else", () => {
    expect([" \t\r\f", "", "\v", "\u00a0", "{}"].map((t) => isBlankFrame(Buffer.from(t)))).toEqual([true, true, false, false, false]);
  });

  it("answers a client frame over the bound FRAME_TOO_LARGE; it never reaches the server, and relaying goes on", async () => {
    const dir = tempDir();
    const audit = join(dir, "record.aarl");
    const stdin = new PassThrough();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sink = (into: Buffer[]) => new Writable({ write: (chunk: Buffer, _e, done) => void (into.push(chunk), done()) });
    const run = runWrap({
      command: process.execPath,
      args: [MIRROR],
      audit,
      key: KEY,
      maxFrameBytes: 4096,
      stdin,
      stdout: sink(out),
      stderr: sink(err),
      signals: [],
      env: { ...process.env, MIRROR_QUIET: "" },
    });
    const big = call(1, "echo", { text: "z".repeat(10_000) });
    stdin.write(Buffer.concat([big, Buffer.from("\n")]));
    stdin.write(Buffer.concat([call(2, "echo"), Buffer.from("\n")]));
    stdin.end();
    const result = await run;
    const frames = Buffer.concat(out)
      .toString()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(frames[0]).toMatchObject({ id: null, error: { code: -32042, data: { aegis: { code: "FRAME_TOO_LARGE", layer: "wrap" } } } });
    expect(frames[1]).toMatchObject({ id: 2, result: { mirrored: "tools/call" } });
    expect(Buffer.concat(err).toString()).toContain(`dropped a ${big.length}-byte frame from the client (over the 4096-byte bound)`);
    expect(Buffer.concat(err).toString()).not.toContain("received tools/call 1 ");
    // Recorded by the digest of the bytes it was, which were never kept.
    expect(
      linesOf(audit)
        .filter((l) => l.line_type === "outcome")
        .map((o) => [o["tool_id"], o["request_digest"]]),
    ).toEqual([
      ["<unreadable-frame>", sha256(big)],
      ["echo", sha256(call(2, "echo"))],
    ]);
    expect(result.exitCode).toBe(0);
  });
});
