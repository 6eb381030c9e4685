import { createServer } from "node:http";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundedFetch, eventsWithin } from "../src/bounded-fetch.js";

/**
 * The bound on a `--url` server's messages (SPEC §17.1, §17.10), below the SDK's transport:
 * every event within the bound passes byte for byte, however the stream is cut into chunks;
 * every event over it is dropped whole and counted, and nothing of it is held past the bound.
 */

const TERMINATORS = ["\n", "\r\n", "\r"] as const;
/** A line's text: no line end in it, never empty (an empty line ends an event). */
const lineText = fc.oneof(
  fc.string({ unit: fc.constantFrom("a", "é", ":", " ", "{", "}", "😀"), minLength: 1, maxLength: 40 }).map((t) => `data: ${t}`),
  fc.constantFrom("event: message", "id: 7", ": a comment", "retry: 500", "data:"),
);
/** One event as a server writes it: lines with one line end each, then a blank line. */
const event = fc
  .tuple(fc.array(lineText, { minLength: 1, maxLength: 5 }), fc.constantFrom(...TERMINATORS))
  .map(([lines, end]) => Buffer.from(`${lines.map((l) => `${l}${end}`).join("")}${end}`));

/** `bytes` through the splitter in the pieces `cuts` make: what passed, and what was dropped. */
async function through(bytes: Buffer, cuts: readonly number[], max: number): Promise<{ passed: Buffer; dropped: number[] }> {
  const dropped: number[] = [];
  const points = [0, ...new Set(cuts.map((c) => c % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
  const source = new ReadableStream<Uint8Array>({
    start: (controller) => {
      for (let i = 1; i < points.length; i++) controller.enqueue(bytes.subarray(points[i - 1], points[i]));
      controller.close();
    },
  });
  const parts: Uint8Array[] = [];
  const reader = source.pipeThrough(eventsWithin({ maxMessageBytes: max, onOversize: (n) => dropped.push(n) })).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value);
  return { passed: Buffer.concat(parts), dropped };
}

describe("eventsWithin: an event stream cut into events at the byte level", () => {
  it("passes every stream of events within the bound byte for byte, wherever it is cut", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 8 }), fc.array(fc.nat(2000), { maxLength: 10 }), async (events, cuts) => {
        const bytes = Buffer.concat(events);
        const { passed, dropped } = await through(bytes, cuts, 1 << 20);
        expect(passed.equals(bytes)).toBe(true);
        expect(dropped).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it("drops exactly the events over the bound, counting each, and passes the rest as they came", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(2000), { maxLength: 10 }), fc.nat(60), async (events, cuts, max) => {
        const { passed, dropped } = await through(Buffer.concat(events), cuts, max);
        expect(passed.equals(Buffer.concat(events.filter((e) => e.length <= max)))).toBe(true);
        expect(dropped.length).toBe(events.filter((e) => e.length > max).length);
      }),
      { numRuns: 1000 },
    );
  });

  it("holds nothing of an event past the bound: an endless one costs no more than the bound", async () => {
    const dropped: number[] = [];
    const splitter = eventsWithin({ maxMessageBytes: 1024, onOversize: (n) => dropped.push(n) });
    const writer = splitter.writable.getWriter();
    const reader = splitter.readable.getReader();
    const out: Uint8Array[] = [];
    const reading = (async () => {
      for (let read = await reader.read(); !read.done; read = await reader.read()) out.push(read.value);
    })();
    await writer.write(Buffer.from("data: "));
    // 64 MiB of one line: counted as it passes.
    const mib = Buffer.alloc(1 << 20, 0x61);
    for (let i = 0; i < 64; i++) await writer.write(mib);
    await writer.write(Buffer.from("\n\ndata: next\n\n"));
    await writer.close();
    await reading;
    expect(dropped).toEqual([6 + 64 * (1 << 20) + 2]);
    expect(Buffer.concat(out).toString()).toBe("data: next\n\n");
  });
});

describe("boundedFetch: every body of a --url server's answers bounded", () => {
  it("passes a JSON body within the bound, and makes one over it an empty batch; truncates an error's text", async () => {
    const bodies: Record<string, { type: string; status: number; body: string }> = {
      "/small": { type: "application/json", status: 200, body: '{"jsonrpc":"2.0","id":1,"result":{}}' },
      "/large": { type: "application/json", status: 200, body: `{"jsonrpc":"2.0","id":1,"result":{"x":"${"a".repeat(5000)}"}}` },
      "/error": { type: "text/plain", status: 500, body: "e".repeat(5000) },
    };
    const server = createServer((req, res) => {
      const answer = bodies[req.url ?? ""];
      res.writeHead(answer?.status ?? 404, { "content-type": answer?.type ?? "text/plain", "mcp-session-id": "s-1" }).end(answer?.body ?? "");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    try {
      const dropped: number[] = [];
      const bounded = boundedFetch(fetch, { maxMessageBytes: 1000, onOversize: (n) => dropped.push(n) });
      const small = await bounded(`${base}/small`);
      expect(small.headers.get("mcp-session-id")).toBe("s-1");
      expect(await small.text()).toBe(bodies["/small"]?.body);
      expect(await (await bounded(`${base}/large`)).text()).toBe("[]");
      expect(dropped).toEqual([bodies["/large"]?.body.length]);
      const error = await bounded(`${base}/error`);
      expect(error.status).toBe(500);
      expect(await error.text()).toBe("e".repeat(1000));
    } finally {
      server.close();
    }
  });
});
