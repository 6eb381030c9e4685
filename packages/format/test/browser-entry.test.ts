import { build } from "esbuild";
import fc from "fast-check";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SigningKey } from "../src/crypto/keys.js";
import { verifyingKey, type VerifyingKey } from "../src/crypto/ed25519.js";
import type { SignatureToCheck } from "../src/crypto/signing.js";
import { SignatureBatch, checksOf } from "../src/verify/signature-batch.js";
import { fromCheckedHex, hexInto, toHex } from "../src/wire/hex.js";
import { detachedString } from "../src/wire/text.js";

/**
 * `@aegis/format/browser` runs in a page with no polyfill (adr/0031): no module it reaches
 * names a `node:` module or Node's `Buffer`, and the codecs that took Buffer's place give
 * Buffer's bytes, which the tests here use as the oracle.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

describe("@aegis/format/browser", () => {
  it("bundles for a browser with no node: module, Buffer, process or require (the built entry: npm run build first)", async () => {
    const result = await build({
      entryPoints: ["@aegis/format/browser"],
      absWorkingDir: ROOT,
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    const text = result.outputFiles.map((f) => f.text).join("");
    // noble's hash has a method called `process`: only the global's members count.
    const named = [...text.matchAll(/(?<![\w$.])(?:Buffer\b|process\.|require\(|__dirname\b)|from\s*["']node:/g)].map((m) => m[0]);
    expect(named).toEqual([]);
    // What a verifier is: the walk, the signature checks, SHA-256 and Ed25519 of noble.
    expect(text).toContain("packages/format/dist/verify/walk.js");
    expect(text).toContain("packages/format/dist/crypto/sha256-noble.js");
  });
});

describe("the codecs of the browser's graph give Buffer's bytes", () => {
  const bytes = fc.uint8Array({ maxLength: 200 });

  it("toHex and fromCheckedHex are Buffer's hex, both ways", () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const hex = Buffer.from(b).toString("hex");
        expect(toHex(b)).toBe(hex);
        expect(toHex(b.subarray(1))).toBe(hex.slice(2));
        expect([...fromCheckedHex(hex)]).toEqual([...b]);
      }),
    );
  });

  it("hexInto writes at its offset and nowhere else", () => {
    fc.assert(
      fc.property(bytes, fc.nat({ max: 16 }), (b, at) => {
        const into = new Uint8Array(at + b.length + 3).fill(0xee);
        hexInto(Buffer.from(b).toString("hex"), into, at);
        expect([...into]).toEqual([...new Array<number>(at).fill(0xee), ...b, 0xee, 0xee, 0xee]);
      }),
    );
  });

  it("detachedString keeps every string, lone surrogates and U+0000 included", () => {
    const units = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 60 }).map((codes) => String.fromCharCode(...codes));
    fc.assert(
      fc.property(fc.oneof(units, fc.string({ unit: "binary" })), (s) => {
        expect(detachedString(s)).toBe(s);
      }),
    );
    expect(detachedString("\ud800x\udfff")).toBe("\ud800x\udfff");
  });

  it("a signature batch carries each check's key, signature and message as Buffer would encode them", () => {
    const key = verifyingKey(SigningKey.fromSeed(new Uint8Array(32).fill(7)).publicKey);
    const other = verifyingKey(SigningKey.fromSeed(new Uint8Array(32).fill(9)).publicKey);
    if (typeof key === "string" || typeof other === "string") throw new Error("the test keys are points");
    const claim = (k: VerifyingKey, signature: Uint8Array): SignatureToCheck => ({ code: "check", key: k, signature: Buffer.from(signature).toString("hex") });
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            other: fc.boolean(),
            signature: fc.uint8Array({ minLength: 64, maxLength: 64 }),
            // Text to encode (UTF-8, lone surrogates as U+FFFD, as Buffer writes them), or a row to cut.
            message: fc.oneof(
              fc.string({ unit: "binary", maxLength: 300 }),
              fc.string({ maxLength: 40 }).map((s) => `${s}\ud800`),
            ),
            cut: fc.option(fc.tuple(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat())),
          }),
          { maxLength: 30 },
        ),
        fc.integer({ min: 1, max: 512 }),
        (checks, capacity) => {
          // A small first capacity makes the batch grow, and keep what it held, as it goes.
          const batch = new SignatureBatch(capacity);
          const expected: { key: string; signature: number[]; message: number[] }[] = [];
          for (const c of checks) {
            const k = c.other ? other : key;
            if (c.cut === null) {
              batch.add(claim(k, c.signature), c.message);
              expected.push({ key: k.hex, signature: [...c.signature], message: [...Buffer.from(c.message, "utf8")] });
            } else {
              const [row, a, b] = c.cut;
              const start = a % (row.length + 1);
              const end = start + (b % (row.length - start + 1));
              batch.addCut(claim(k, c.signature), row, start, end);
              expected.push({ key: k.hex, signature: [...c.signature], message: [...Buffer.concat([row.subarray(0, start), row.subarray(end)])] });
            }
          }
          const encoded = batch.encode();
          const found = [...checksOf(encoded)].map((c) => ({ key: c.key, signature: [...c.signature], message: [...c.message] }));
          expect(found).toEqual(expected);
          // Each key travels once, in the order first used.
          expect(encoded.keys).toEqual([...new Set(expected.map((e) => e.key))]);
          expect(encoded.count).toBe(checks.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a batch whose check names a key it does not carry is refused, not read as another key's", () => {
    const batch = new SignatureBatch(64);
    const key = verifyingKey(SigningKey.fromSeed(new Uint8Array(32).fill(7)).publicKey);
    if (typeof key === "string") throw new Error("the test key is a point");
    batch.add({ code: "check", key, signature: "00".repeat(64) }, "m");
    const encoded = batch.encode();
    expect(() => [...checksOf({ ...encoded, keys: [] })]).toThrow("signature batch: key index out of range");
  });
});
