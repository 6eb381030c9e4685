import { describe, expect, it } from "vitest";
import { canonicalJson } from "../src/canonical-json.js";
import type { Json } from "../src/message.js";

/** SPEC §17.6: a tool's definition is pinned by the SHA-256 of its RFC 8785 form. */
describe("canonicalJson", () => {
  it("writes RFC 8785's own example (Appendix B's sample input) as the RFC does", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as Json;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts members by UTF-16 code units, as RFC 8785 §3.2.3 does", () => {
    expect(canonicalJson({ "\u20ac": 1, "\r": 2, "\ud83d\ude00": 3, "\u0080": 4, "1": 5, "\u00f6": 6 })).toBe(
      '{"\\r":2,"1":5,"\u0080":4,"\u00f6":6,"\u20ac":1,"\ud83d\ude00":3}',
    );
  });

  it("writes a value as deep as the frame reader lets one be (127 levels)", () => {
    let value: Json = { x: 1 };
    for (let i = 0; i < 126; i++) value = i % 2 === 0 ? [value] : { a: value };
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });

  it("has no form for a lone surrogate", () => {
    expect(canonicalJson({ name: "\ud800" })).toBeUndefined();
    expect(canonicalJson({ ["\udc00"]: 1 })).toBeUndefined();
  });

  it("writes a member named __proto__ as any other, as a strict reader makes it", () => {
    const value = JSON.parse('{"b":1,"__proto__":{"x":null}}') as Json;
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":null},"b":1}');
  });
});
