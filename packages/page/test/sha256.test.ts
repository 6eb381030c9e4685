import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/sha256.js";

/**
 * The page's SHA-256 (build.mjs puts it in place of noble's in both bundles) is SHA-256:
 * Node's answer on every length around the one- and two-block tails, on long inputs, and
 * on text with characters of every UTF-8 length.
 */
describe("the page's sha256Hex", () => {
  const node = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex");

  it("is Node's SHA-256 on every length from 0 to 300 bytes and on long inputs", () => {
    for (let length = 0; length <= 300; length++) {
      const bytes = randomBytes(length);
      expect(sha256Hex(bytes), `length ${length}`).toBe(node(bytes));
    }
    for (const length of [1000, 4095, 65_536, 1_000_003]) {
      const bytes = randomBytes(length);
      expect(sha256Hex(bytes), `length ${length}`).toBe(node(bytes));
    }
  });

  it("hashes a view as the bytes it shows, and a string as its UTF-8", () => {
    const record = randomBytes(4096);
    expect(sha256Hex(record.subarray(100, 777))).toBe(node(record.subarray(100, 777)));
    for (const text of ["", "abc", "é€😀 line", "\u{10ffff}".repeat(40), '{"a":"\u00ff"}'.repeat(9)]) expect(sha256Hex(text), text).toBe(node(text));
    // FIPS 180-4's two-block example.
    expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  });
});
