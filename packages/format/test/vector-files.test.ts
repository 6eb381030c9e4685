import { describe, expect, it } from "vitest";
import { LineHash, parseJson, tryCanonicalize, verifyStrict, verifyingKey } from "../src/index.js";
import { dalekStrict } from "./support/dalek-oracle.js";
import { hex, readVectorJson } from "./support/vectors.js";

interface CanonicalCase {
  readonly name: string;
  readonly input: string;
  readonly canonical: string | null;
  readonly sha256: string | null;
  readonly fault: { readonly code: string; readonly path: string } | null;
}

describe("vectors/canonical/cases.json", () => {
  const cases = readVectorJson<CanonicalCase[]>("canonical/cases.json");
  it.each(cases)("$name", (c) => {
    const result = tryCanonicalize(parseJson(c.input));
    if (c.fault === null) {
      expect(result).toEqual({ ok: true, text: c.canonical });
      expect(LineHash.of(c.canonical ?? "")).toBe(c.sha256);
    } else {
      expect(result).toEqual({ ok: false, fault: expect.objectContaining(c.fault) as unknown });
    }
  });
});

describe("vectors/ed25519/strict.json", () => {
  const file = readVectorJson<{ public_key: string; message_utf8: string; cases: { name: string; signature: string; valid: boolean }[] }>("ed25519/strict.json");
  const key = verifyingKey(hex(file.public_key));
  const message = new TextEncoder().encode(file.message_utf8);
  it.each(file.cases)("$name", (c) => {
    if (typeof key === "string") throw new Error(`the vector key is ${key}`);
    expect(verifyStrict(key, message, hex(c.signature))).toBe(c.valid);
    expect(dalekStrict(message, hex(file.public_key), hex(c.signature)) === "valid").toBe(c.valid);
  });
});
