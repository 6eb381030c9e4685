import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventReader, EventSplitter, fieldsOf, type ServerSentEvent } from "../src/sse.js";

/**
 * A `--url` server's event streams (SPEC §17.1, §17.10), read at the byte level: every event
 * within the bound passes byte for byte, however the stream is cut into chunks; every event
 * over it is dropped whole and counted, and nothing of it is held past the bound; the fields
 * are read as WHATWG HTML's "Server-sent events" says.
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

/** `bytes` through the splitter in the pieces `cuts` make: the events passed, and the sizes dropped. */
function through(bytes: Buffer, cuts: readonly number[], max: number): { passed: Buffer[]; dropped: number[] } {
  const dropped: number[] = [];
  const passed: Buffer[] = [];
  const points = [0, ...new Set(cuts.map((c) => c % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
  const splitter = new EventSplitter({ maxMessageBytes: max, onOversize: (n) => dropped.push(n) }, (e) => passed.push(Buffer.from(e)));
  for (let i = 1; i < points.length; i++) splitter.push(bytes.subarray(points[i - 1], points[i]));
  splitter.end();
  return { passed, dropped };
}

describe("EventSplitter: an event stream cut into events at the byte level", () => {
  it("passes every event within the bound byte for byte, wherever the stream is cut", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 8 }), fc.array(fc.nat(2000), { maxLength: 10 }), (events, cuts) => {
        const { passed, dropped } = through(Buffer.concat(events), cuts, 1 << 20);
        expect(passed.map((p) => p.toString("hex"))).toEqual(events.map((e) => e.toString("hex")));
        expect(dropped).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it("drops exactly the events over the bound, counting each, and passes the rest as they came", () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(2000), { maxLength: 10 }), fc.nat(60), (events, cuts, max) => {
        const { passed, dropped } = through(Buffer.concat(events), cuts, max);
        expect(Buffer.concat(passed).equals(Buffer.concat(events.filter((e) => e.length <= max)))).toBe(true);
        expect(dropped).toEqual(events.filter((e) => e.length > max).map((e) => e.length));
      }),
      { numRuns: 1000 },
    );
  });

  it("holds nothing of an event past the bound: an endless one costs no more than the bound", () => {
    const dropped: number[] = [];
    const passed: Buffer[] = [];
    const splitter = new EventSplitter({ maxMessageBytes: 1024, onOversize: (n) => dropped.push(n) }, (e) => passed.push(e));
    splitter.push(Buffer.from("data: "));
    // 64 MiB of one line: counted as it passes, and the heap does not grow with it.
    const mib = Buffer.alloc(1 << 20, 0x61);
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 64; i++) splitter.push(Buffer.from(mib));
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(48 * (1 << 20));
    splitter.push(Buffer.from("\n\ndata: next\n\n"));
    splitter.end();
    expect(dropped).toEqual([6 + 64 * (1 << 20) + 2]);
    expect(Buffer.concat(passed).toString()).toBe("data: next\n\n");
  });
});

/** Every event a whole stream holds, read field by field. */
function read(stream: string | Buffer, max = 1 << 20): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  const reader = new EventReader({ maxMessageBytes: max, onOversize: () => undefined }, (e) => events.push(e));
  reader.push(typeof stream === "string" ? Buffer.from(stream) : stream);
  reader.end();
  return events;
}

describe("EventReader: the fields of each event, as WHATWG HTML reads them", () => {
  it("reads the standard's own examples", () => {
    // "data: YHOO / data: +2 / data: 10": one event, its data the three lines joined by LF.
    expect(read("data: YHOO\ndata: +2\ndata: 10\n\n").map((e) => e.data.toString())).toEqual(["YHOO\n+2\n10"]);
    // A comment, then data with and without the space after the colon: the same data.
    expect(read(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n").map((e) => [e.data.toString(), e.id])).toEqual([
      ["", undefined],
      ["first event", "1"],
      ["second event", ""],
      [" third event", undefined],
    ]);
    // "data" alone is an empty data line; the last event, never ended by a blank line, is not dispatched.
    expect(read("data\n\ndata\ndata\n\ndata:").map((e) => e.data.toString())).toEqual(["", "\n"]);
  });

  it("reads event, retry and a byte-order mark as the standard says, and keeps data as bytes", () => {
    const [first, second] = read(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('event: message\r\nretry: 250\r\ndata: {"a":1}\r\n\r\ndata: never ended')]),
    );
    expect(first).toMatchObject({ type: "message", retry: 250, id: undefined });
    expect(first?.data.toString()).toBe('{"a":1}');
    expect(second).toBeUndefined();
    const [other] = read("event: other\nretry: 1x\nid: a\0b\ndata: x\n\n");
    expect(other).toMatchObject({ type: "other", retry: undefined, id: undefined });
    // Not text: a byte that is not UTF-8 stays as it came, for the strict reader to refuse.
    expect(read(Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a]))[0]?.data).toEqual(Buffer.from([0xff]));
  });

  it("reads each event's data lines joined by LF, however the lines end and the stream is cut", () => {
    const payload = fc.string({ unit: fc.constantFrom("a", "é", ":", " ", "{", "😀"), maxLength: 20 });
    fc.assert(
      fc.property(
        fc.array(fc.array(payload, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        fc.constantFrom(...TERMINATORS),
        fc.array(fc.nat(500), { maxLength: 6 }),
        (events, end, cuts) => {
          const bytes = Buffer.from(events.map((lines) => `event: message${end}${lines.map((l) => `data: ${l}${end}`).join("")}${end}`).join(""));
          const got: string[] = [];
          const reader = new EventReader({ maxMessageBytes: 1 << 20, onOversize: () => undefined }, (e) => got.push(e.data.toString()));
          const points = [0, ...new Set(cuts.map((c) => c % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
          for (let i = 1; i < points.length; i++) reader.push(bytes.subarray(points[i - 1], points[i]));
          reader.end();
          expect(got).toEqual(events.map((lines) => lines.join("\n")));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("fieldsOf ignores fields it does not know", () => {
    expect(fieldsOf(Buffer.from("foo: bar\ndata: x\n\n"))).toMatchObject({ type: "message", id: undefined, retry: undefined });
  });
});
