import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LineHash } from "../src/index.js";
import { tryCanonicalize, parseJson, verifyStrict, verifyingKey } from "../src/internal.js";
import { dalekStrict } from "./support/dalek-oracle.js";
import { manifestEntries } from "./support/manifest.js";
import { hex, vectorPath } from "./support/vectors.js";

/**
 * The canonical-form and Ed25519 vectors of `vectors/manifest.json`, checked through this
 * package's API directly (the CLI's `aegis vectors` runs them too), and the Ed25519 ones
 * also against the independent dalek-rule oracle, so a vector cannot merely echo us.
 */
describe("canonical vectors (SPEC §3)", () => {
  const cases = manifestEntries("canonical");
  it("cover both sides of the value space", () => {
    expect(cases.filter((c) => c.flags[0] === "negative").length).toBeGreaterThan(20);
    expect(cases.filter((c) => c.flags[0] === "positive").length).toBeGreaterThan(5);
  });
  it.each(cases)("$id", (c) => {
    const row = readFileSync(vectorPath(String(c.input["row"])), "utf8");
    const expected = c.expected as { result: string; canonical?: string; sha256?: string; fault?: { code: string; path: string } };
    let value;
    try {
      value = parseJson(row);
    } catch {
      expect(expected.result).toBe("not_json");
      return;
    }
    const result = tryCanonicalize(value);
    if (expected.result === "canonical") {
      expect(result).toEqual({ ok: true, text: expected.canonical });
      expect(LineHash.of(expected.canonical ?? "")).toBe(expected.sha256);
    } else {
      expect(expected.result).toBe("out_of_space");
      expect(result).toEqual({ ok: false, fault: expect.objectContaining(expected.fault) as unknown });
    }
  });
});

describe("Ed25519 vectors (SPEC §8.5)", () => {
  const cases = manifestEntries("ed25519");
  it("include every ed25519-speccheck case", () => {
    expect(cases.filter((c) => c.flags.includes("speccheck"))).toHaveLength(15);
  });
  it.each(cases)("$id", (c) => {
    const file = JSON.parse(readFileSync(vectorPath(String(c.input["case"])), "utf8")) as { public_key: string; message: string; signature: string };
    const valid = (c.expected as { valid: boolean }).valid;
    const key = verifyingKey(hex(file.public_key));
    expect(typeof key !== "string" && verifyStrict(key, hex(file.message), hex(file.signature))).toBe(valid);
    if (file.public_key.length === 64 && file.signature.length === 128) {
      expect(dalekStrict(hex(file.message), hex(file.public_key), hex(file.signature)) === "valid").toBe(valid);
    }
  });
});
