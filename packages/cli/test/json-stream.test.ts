import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StreamedDocument } from "../src/json-stream.js";

/** JSON values as JSON.parse gives them back (no -0, no undefined). */
const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
/** Member names as a document has them: not the array's, and not an array index, which an object lists first. */
const name = fc.string().filter((k) => k !== "__proto__" && k !== "list" && !/^(0|[1-9]\d*)$/.test(k));
const members = fc.dictionary(name, json, { maxKeys: 5 });

function write(head: Record<string, unknown>, items: readonly unknown[], tail: Record<string, unknown>): string {
  const document = new StreamedDocument("list");
  return document.start(head) + items.map((item) => document.item(item)).join("") + document.end(tail);
}

describe("a --json document streamed by StreamedDocument", () => {
  it("parses to the document built whole: the members before, the array, the members after", () => {
    fc.assert(
      fc.property(members, fc.array(json, { maxLength: 5 }), members, (head, items, tail) => {
        const tailOnly = Object.fromEntries(Object.entries(tail).filter(([k]) => !(k in head)));
        expect(JSON.parse(write(head, items, tailOnly))).toEqual({ ...head, list: items, ...tailOnly });
      }),
    );
  });

  it("with no item and scalars after the array, is the bytes JSON.stringify(document, null, 2) writes", () => {
    const scalars = fc.dictionary(name, fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 4 });
    fc.assert(
      fc.property(members, scalars, (head, tail) => {
        const tailOnly = Object.fromEntries(Object.entries(tail).filter(([k]) => !(k in head)));
        expect(write(head, [], tailOnly)).toBe(`${JSON.stringify({ ...head, list: [], ...tailOnly }, null, 2)}\n`);
      }),
    );
  });

  it("puts each item, and each member after the array, on a line of its own, and leaves an undefined member out", () => {
    expect(write({ schema: "s", nested: { a: [1] } }, [{ x: 1 }, { y: [2] }], { summary: { n: 2 }, error: undefined, exit_code: 0 })).toBe(
      '{\n  "schema": "s",\n  "nested": {\n    "a": [\n      1\n    ]\n  },\n  "list": [\n    {"x":1},\n    {"y":[2]}\n  ],\n  "summary": {"n":2},\n  "exit_code": 0\n}\n',
    );
  });
});
