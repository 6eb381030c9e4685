import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { transition, type Phase } from "../src/lifecycle.js";
import { MAX_FRAME_DEPTH, readFrame } from "../src/strict-frame.js";

const codeOf = (text: string | Buffer): string => {
  const r = readFrame(typeof text === "string" ? Buffer.from(text, "utf8") : text);
  return r.ok ? "ok" : r.unreadable.code;
};

/** An integer JSON.stringify writes without an exponent, past what a double holds exactly. */
function hasUnsafeInteger(value: unknown): boolean {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value) && !JSON.stringify(value).includes("e");
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(hasUnsafeInteger);
}

describe("the relay's one reading of a frame (SPEC §17.1)", () => {
  it("[M17.8] reads every JSON document as JSON.parse does", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        const r = readFrame(Buffer.from(text, "utf8"));
        // The one refusal a well-formed document can meet: an integer that readers hold differently.
        if (!r.ok) expect([r.unreadable.code, hasUnsafeInteger(value)]).toEqual(["number_out_of_range", true]);
        else expect(JSON.stringify(r.value)).toBe(JSON.stringify(JSON.parse(text)));
      }),
    );
  });

  it("[M17.8] whatever bytes it accepts, JSON.parse reads as the same value, and each refusal has its code", () => {
    const pieces = fc.constantFrom(
      '{"a":',
      "1",
      "1.5",
      "-0",
      "1e400",
      '"x"',
      '"\\ud800"',
      '"\\ud83d\\ude00"',
      "[",
      "]",
      "{",
      "}",
      ",",
      ":",
      " ",
      "\r",
      "\t",
      "NaN",
      "null",
      "true",
      '"a"',
      "\u00e9",
    );
    const bytes = fc.oneof(
      fc.array(pieces, { maxLength: 12 }).map((p) => Buffer.from(p.join(""), "utf8")),
      fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a)),
    );
    fc.assert(
      fc.property(bytes, (frame) => {
        const r = readFrame(frame);
        if (!r.ok) return;
        const text = new TextDecoder("utf-8", { fatal: true }).decode(frame);
        expect(JSON.stringify(r.value)).toBe(JSON.stringify(JSON.parse(text)));
      }),
    );
  });

  it("refuses what forgiving readers take differently, each with its code", () => {
    expect(codeOf(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toBe("not_utf8");
    // An encoded surrogate (ED A0 80) and an overlong NUL are not UTF-8 either.
    expect(codeOf(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toBe("not_utf8");
    expect(codeOf(Buffer.from([0x22, 0xc0, 0x80, 0x22]))).toBe("not_utf8");
    expect(codeOf(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe("byte_order_mark");
    expect(codeOf('{"a":1,"a":2}')).toBe("duplicate_key");
    expect(codeOf('{"a":1,"\\u0061":2}')).toBe("duplicate_key");
    expect(codeOf('"\\ud800"')).toBe("lone_surrogate");
    expect(codeOf('"\\udc00\\ud800"')).toBe("lone_surrogate");
    expect(codeOf('"\\ud800\\u0041"')).toBe("lone_surrogate");
    expect(codeOf("NaN")).toBe("not_json");
    expect(codeOf("[Infinity]")).toBe("not_json");
    expect(codeOf("[-Infinity]")).toBe("not_json");
    expect(codeOf("[1,]")).toBe("not_json");
    expect(codeOf("{} {}")).toBe("not_json");
    expect(codeOf("[01]")).toBe("not_json");
    expect(codeOf("'a'")).toBe("not_json");
    expect(codeOf("\f{}")).toBe("not_json");
    expect(codeOf("9007199254740992")).toBe("number_out_of_range");
    expect(codeOf("-9007199254740992")).toBe("number_out_of_range");
    expect(codeOf("9007199254740991")).toBe("ok");
    expect(codeOf("1e400")).toBe("number_out_of_range");
    expect(codeOf("1e-400")).toBe("ok");
    expect(codeOf('{"a":1}\r')).toBe("ok");
    expect(codeOf('{"a":\r1}')).toBe("inner_carriage_return");
    expect(codeOf(`${"[".repeat(MAX_FRAME_DEPTH)}${"]".repeat(MAX_FRAME_DEPTH)}`)).toBe("ok");
    expect(codeOf(`${"[".repeat(MAX_FRAME_DEPTH + 1)}${"]".repeat(MAX_FRAME_DEPTH + 1)}`)).toBe("too_deep");
    expect(codeOf(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`)).toBe("too_deep");
  });

  it("makes __proto__ and constructor members, as JSON.parse does, never a prototype", () => {
    const r = readFrame(Buffer.from('{"__proto__":{"polluted":true},"constructor":1}'));
    if (!r.ok) throw new Error("refused");
    expect(Object.keys(r.value as object)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});

describe("the relay's lifecycle (SPEC §17.7)", () => {
  const relaying: Phase = { code: "relaying" };
  it("names every way it ends", () => {
    expect(transition(relaying, { code: "server_ended" })).toEqual({ code: "ended", why: { code: "child_exited" }, serverEndedFirst: true });
    const draining = transition(relaying, { code: "client_ended" });
    expect(draining).toEqual({ code: "draining", cause: "client_hung_up" });
    expect(transition(draining, { code: "grace_over" })).toEqual({ code: "ended", why: { code: "grace_expired" }, serverEndedFirst: false });
    expect(transition(draining, { code: "server_ended" })).toEqual({ code: "ended", why: { code: "child_exited" }, serverEndedFirst: false });
    const stopping = transition(draining, { code: "signal", signal: "SIGTERM" });
    expect(stopping).toEqual({ code: "stopping", signal: "SIGTERM" });
    for (const event of [{ code: "signal", signal: "SIGINT" }, { code: "server_ended" }, { code: "grace_over" }] as const) {
      expect(transition(stopping, event)).toEqual({ code: "ended", why: { code: "signalled", signal: "SIGTERM" }, serverEndedFirst: false });
    }
    expect(transition(relaying, { code: "record_failed" })).toEqual({ code: "draining", cause: "record_failed" });
    expect(transition(relaying, { code: "grace_over" })).toBe(relaying);
    const ended = transition(relaying, { code: "server_ended" });
    expect(transition(ended, { code: "signal", signal: "SIGTERM" })).toBe(ended);
  });
});
