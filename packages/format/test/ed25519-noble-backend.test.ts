import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { readVectorJson, hex, VECTORS } from "./support/vectors.js";

// The browser bundle's back end in place of node:crypto's (package.json's "browser" map does
// the same swap for a bundler): verifyStrict below is the one a report page runs.
vi.mock("../src/crypto/ed25519-backend.js", () => import("../src/crypto/ed25519-backend-noble.js"));
vi.mock("../src/crypto/sha256.js", () => import("../src/crypto/sha256-noble.js"));

const { passesPrechecks, sha256Hex, verifyStrict, verifyingKey } = await import("../src/browser.js");
const { ED25519_BACKEND } = await import("../src/crypto/ed25519-backend.js");
const { SigningKey } = await import("../src/crypto/keys.js");
const node = await vi.importActual<typeof import("../src/crypto/ed25519-backend.js")>("../src/crypto/ed25519-backend.js");
const nodeSha = await vi.importActual<typeof import("../src/crypto/sha256.js")>("../src/crypto/sha256.js");

interface Manifest {
  readonly vectors: readonly {
    readonly id: string;
    readonly kind: string;
    readonly input: { readonly case?: string };
    readonly expected: { readonly valid?: boolean };
  }[];
}
const manifest = JSON.parse(readFileSync(`${VECTORS}manifest.json`, "utf8")) as Manifest;
const cases = manifest.vectors
  .filter((v) => v.kind === "ed25519")
  .map((v) => ({ id: v.id, valid: v.expected.valid, ...readVectorJson<{ public_key: string; message: string; signature: string }>(v.input.case ?? "") }));

function strict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = verifyingKey(publicKey);
  return typeof key !== "string" && signature.length === 64 && verifyStrict(key, message, signature);
}

describe("the browser's Ed25519 back end (@noble/ed25519, cofactorless) under SPEC §8.5", () => {
  it("is the one in use here", () => {
    expect(ED25519_BACKEND).toBe("@noble/ed25519");
  });

  it.each(cases)("$id: the expected answer", (c) => {
    expect(strict(hex(c.public_key), hex(c.message), hex(c.signature))).toBe(c.valid);
  });

  it("agrees with node:crypto's strict answer on honest signatures and on each with one bit flipped", () => {
    const key = SigningKey.generate();
    const decoded = verifyingKey(key.publicKey);
    const handle = node.publicKeyHandle(key.publicKey);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.option(fc.tuple(fc.nat(63), fc.nat(7))), (message, flip) => {
        const signature = Uint8Array.from(key.sign(message));
        if (flip !== null) signature[flip[0]] = (signature[flip[0]] ?? 0) ^ (1 << flip[1]);
        const browser = typeof decoded !== "string" && verifyStrict(decoded, message, signature);
        const nodeStrict = passesPrechecks(signature) && node.equationHolds(handle, message, signature);
        expect(browser).toBe(nodeStrict);
        if (flip === null) expect(browser).toBe(true);
      }),
      { numRuns: 80 },
    );
  });

  it("hashes as node:crypto does", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 5000 }), (bytes) => sha256Hex(bytes) === nodeSha.sha256Hex(bytes)));
  });
});
