import { Point } from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { describe, expect, it } from "vitest";
import { LineHash, SigningKey, describeVerdict } from "../src/index.js";
import { canonicalize, verifyStrict, verifyingKey } from "../src/internal.js";
import { SMALL_ORDER_ENCODINGS } from "../src/crypto/ed25519.js";
import { passesPrechecks } from "../src/browser.js";
import { equationHolds } from "../src/crypto/ed25519-backend.js";
import { dalekStrict } from "./support/dalek-oracle.js";
import { reseal } from "./support/chains.js";
import { hex } from "./support/vectors.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";

/**
 * Steps 1 and 2 of SPEC §8.5, which are ours and not the back end's (adr/0001): S below L,
 * and R none of the fourteen small-order encodings. OpenSSL's verify makes neither check
 * the way dalek's `verify_strict` does, so each is held here at its edge: by
 * `passesPrechecks` itself, and by a signature that OpenSSL's equation accepts and the
 * strict rule refuses.
 */
const L = Point.CURVE().n;
const SEED = new Uint8Array(32).fill(3);
const KEY = SigningKey.fromSeed(SEED);
const MESSAGE = new TextEncoder().encode("a line");

function littleEndian(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).reverse().toString("hex") || "0"}`);
}

function scalarBytes(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, "0"), "hex").reverse());
}

/** The secret scalar a of RFC 8032 §5.1.5: SHA-512 of the seed, its lower half clamped. */
function secretScalar(seed: Uint8Array): bigint {
  const h = sha512(seed).slice(0, 32);
  h[0] = (h[0] ?? 0) & 248;
  h[31] = ((h[31] ?? 0) & 127) | 64;
  return littleEndian(h) % L;
}

/**
 * A signature whose R is the identity and whose S is k·a: [S]B − [k]A is then the identity,
 * so the cofactorless equation holds, for any message, under an honest key.
 */
function identitySignature(message: Uint8Array): Uint8Array {
  const r = hex(`01${"00".repeat(31)}`);
  const k = littleEndian(sha512(new Uint8Array([...r, ...KEY.publicKey, ...message]))) % L;
  return new Uint8Array([...r, ...scalarBytes((k * secretScalar(SEED)) % L)]);
}

function decoded(publicKey: Uint8Array): Exclude<ReturnType<typeof verifyingKey>, string> {
  const key = verifyingKey(publicKey);
  if (typeof key === "string") throw new Error(`fixture key refused: ${key}`);
  return key;
}

describe("[M8.7] step 2: an R of small order is refused before the equation", () => {
  it("an R = identity signature satisfies the cofactorless equation under an honest key, and the strict rule refuses it", () => {
    const key = decoded(KEY.publicKey);
    const forged = identitySignature(MESSAGE);
    // [S]B = R + [k]A holds: the equation alone cannot refuse it.
    const k = littleEndian(sha512(new Uint8Array([...forged.slice(0, 32), ...KEY.publicKey, ...MESSAGE]))) % L;
    const A = Point.fromHex(Buffer.from(KEY.publicKey).toString("hex"));
    const R = Point.fromHex(Buffer.from(forged.slice(0, 32)).toString("hex"));
    expect(Point.BASE.multiply(littleEndian(forged.slice(32))).equals(R.add(A.multiply(k)))).toBe(true);
    // OpenSSL 3.0 (Node 20's) checks the equation and no more, and takes it: the reason step 2
    // is ours. OpenSSL 3.5 (Node 24's) refuses a small-order R itself.
    if (process.versions.openssl.startsWith("3.0.")) expect(equationHolds(key.handle, MESSAGE, forged)).toBe(true);
    if (process.versions.openssl.startsWith("3.5.")) expect(equationHolds(key.handle, MESSAGE, forged)).toBe(false);
    expect(dalekStrict(MESSAGE, KEY.publicKey, forged)).toBe("step2_r_small_order");
    expect(passesPrechecks(forged)).toBe(false);
    expect(verifyStrict(key, MESSAGE, forged)).toBe(false);
  });

  it("a Line signed so is Tampered: the signature does not match it", () => {
    const openRow = reseal([{ schema_version: 2, line_type: "open", seq: 0 }], { key: KEY }).trimEnd();
    const close: Record<string, unknown> = { schema_version: 2, line_type: "close", seq: 1, prev_hash: LineHash.of(openRow), key_id: KEY.keyId };
    close["signature"] = Buffer.from(identitySignature(new TextEncoder().encode(canonicalize(close)))).toString("hex");
    const v = verifyChainBytes(`${openRow}\n${canonicalize(close)}\n`);
    expect(describeVerdict(v)).toBe("Tampered: line at session 0 seq 1: signature does not match this line");
    expect(v.coverage).toEqual({ session_index: 0, seq: 0 });
  });

  it("each of the fourteen encodings, every family of second byte, is refused as R whatever S is", () => {
    const seconds = new Set<string>();
    for (const encoding of SMALL_ORDER_ENCODINGS) {
      seconds.add(encoding.slice(2, 4));
      for (const s of [0n, 1n, L - 1n]) {
        expect(passesPrechecks(new Uint8Array([...hex(encoding), ...scalarBytes(s)])), `${encoding} S=${s}`).toBe(false);
      }
    }
    expect([...seconds].sort()).toEqual(["00", "17", "e8", "ff"]);
  });

  it("an R that shares a second byte with a small-order encoding but is none of them passes", () => {
    const honest = KEY.sign(MESSAGE);
    for (const second of [0x00, 0x17, 0xe8, 0xff]) {
      const r = hex(`02${second.toString(16).padStart(2, "0")}${"00".repeat(30)}`);
      expect(passesPrechecks(new Uint8Array([...r, ...honest.slice(32)]))).toBe(true);
    }
    expect(passesPrechecks(honest)).toBe(true);
  });
});

describe("[M8.7] step 1: S below L", () => {
  const r = KEY.sign(MESSAGE).slice(0, 32);
  const withS = (s: bigint): Uint8Array => new Uint8Array([...r, ...scalarBytes(s)]);

  it("S = L − 1 passes, S = L and above are refused", () => {
    expect(passesPrechecks(withS(L - 1n))).toBe(true);
    expect(passesPrechecks(withS(0n))).toBe(true);
    expect(passesPrechecks(withS(2n ** 252n))).toBe(true);
    expect(passesPrechecks(withS(L))).toBe(false);
    expect(passesPrechecks(withS(L + 1n))).toBe(false);
    expect(passesPrechecks(withS(2n ** 253n))).toBe(false);
    expect(passesPrechecks(withS(2n ** 256n - 1n))).toBe(false);
  });

  it("a signature that is not 64 bytes is refused, not thrown on", () => {
    const honest = KEY.sign(MESSAGE);
    expect(passesPrechecks(honest.slice(0, 63))).toBe(false);
    expect(passesPrechecks(new Uint8Array([...honest, 0]))).toBe(false);
    expect(verifyStrict(decoded(KEY.publicKey), MESSAGE, honest.slice(0, 63))).toBe(false);
  });
});

describe("a public key, decoded once per Session", () => {
  it("keeps its own copy of the bytes, and their hex", () => {
    const bytes = Uint8Array.from(KEY.publicKey);
    const key = decoded(bytes);
    bytes.fill(0);
    expect(key.hex).toBe(KEY.publicKeyHex);
    expect(Buffer.from(key.bytes).toString("hex")).toBe(KEY.publicKeyHex);
    expect(verifyStrict(key, MESSAGE, KEY.sign(MESSAGE))).toBe(true);
  });

  it("refuses 31 or 33 bytes as not a point, and every small-order encoding as small order", () => {
    expect(verifyingKey(KEY.publicKey.slice(0, 31))).toBe("not_a_point");
    expect(verifyingKey(new Uint8Array([...KEY.publicKey, 0]))).toBe("not_a_point");
    for (const encoding of SMALL_ORDER_ENCODINGS) expect(verifyingKey(hex(encoding)), encoding).toBe("small_order");
  });
});
