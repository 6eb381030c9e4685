import { readdirSync } from "node:fs";
import { Point, hashes } from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { describe, expect, it } from "vitest";
import { SigningKey } from "../src/index.js";
import { verifyStrict, verifyingKey } from "../src/internal.js";
import { SMALL_ORDER_ENCODINGS } from "../src/crypto/ed25519.js";
import { hex, readVectorJson, vectorPath } from "./support/vectors.js";

/**
 * SPEC §8.5: whether a stranger's verifier built from a standard cofactorless Ed25519 verify
 * (S < L, A decoded as RFC 8032 §5.1.3 says, k hashing A and R as given, the encoding of
 * [S]B - [k]A compared with R byte for byte) plus the fourteen small-order encodings of §8.5,
 * refused as R and as A, gives our rule's answer. It does on every published case; it differs
 * on exactly twenty public keys, which §8.5 names, and on which fault (§8.4) a key gets.
 */
hashes.sha512 = sha512;

const { n: L, p: P } = Point.CURVE();
const toHex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const littleEndian = (b: Uint8Array): bigint => BigInt(`0x${Buffer.from(b).reverse().toString("hex") || "0"}`);
function encode(y: bigint, sign: boolean): Uint8Array {
  const bytes = Buffer.from(y.toString(16).padStart(64, "0"), "hex").reverse();
  if (sign) bytes[31] = (bytes[31] ?? 0) | 0x80;
  return Uint8Array.from(bytes);
}

/** RFC 8032 §5.1.3 as written: y >= p fails, and x = 0 with the sign bit set fails. */
function rfcDecodes(a: Uint8Array): Point | undefined {
  try {
    return Point.fromBytes(a, false);
  } catch {
    return undefined;
  }
}

/** §8.5's decoding: y modulo p, x = 0 with the sign bit set accepted. */
function lenientDecodes(a: Uint8Array): Point | undefined {
  try {
    return Point.fromBytes(a, true);
  } catch {
    return undefined;
  }
}

/** The standard cofactorless verify, R never decoded, then the small-order list on R and A; `decode` decodes A. */
function standardWithList(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  decode: (a: Uint8Array) => Point | undefined = rfcDecodes,
): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const r = signature.subarray(0, 32);
  if (SMALL_ORDER_ENCODINGS.has(toHex(r)) || SMALL_ORDER_ENCODINGS.has(toHex(publicKey))) return false;
  const s = littleEndian(signature.subarray(32));
  if (s >= L) return false;
  const a = decode(publicKey);
  if (a === undefined) return false;
  const k = littleEndian(sha512(new Uint8Array([...r, ...publicKey, ...message]))) % L;
  const sB = s === 0n ? Point.ZERO : Point.BASE.multiply(s);
  const kA = k === 0n ? Point.ZERO : a.multiply(k);
  return toHex(sB.subtract(kA).toBytes()) === toHex(r);
}

function ours(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = verifyingKey(publicKey);
  return typeof key !== "string" && verifyStrict(key, message, signature);
}

interface Case {
  readonly name: string;
  readonly publicKey: Uint8Array;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
}

function publishedCases(): Case[] {
  const cases: Case[] = [];
  const speccheck = readVectorJson<{ message: string; pub_key: string; signature: string }[]>("external/ed25519-speccheck/cases.json");
  speccheck.forEach((c, i) => cases.push({ name: `speccheck ${i}`, publicKey: hex(c.pub_key), message: hex(c.message), signature: hex(c.signature) }));
  const wycheproof = readVectorJson<{ testGroups: { publicKey: { pk: string }; tests: { tcId: number; msg: string; sig: string }[] }[] }>(
    "external/wycheproof/ed25519_test.json",
  );
  for (const g of wycheproof.testGroups) {
    for (const t of g.tests) cases.push({ name: `wycheproof ${t.tcId}`, publicKey: hex(g.publicKey.pk), message: hex(t.msg), signature: hex(t.sig) });
  }
  for (const v of readVectorJson<{ name: string; public_key: string; message: string; signature: string }[]>("external/rfc8032/vectors.json")) {
    cases.push({ name: `rfc8032 ${v.name}`, publicKey: hex(v.public_key), message: hex(v.message), signature: hex(v.signature) });
  }
  for (const file of readdirSync(vectorPath("ed25519")).filter((f) => f.endsWith(".json"))) {
    const v = readVectorJson<{ public_key: string; message: string; signature: string }>(`ed25519/${file}`);
    cases.push({ name: `ed25519/${file}`, publicKey: hex(v.public_key), message: hex(v.message), signature: hex(v.signature) });
  }
  return cases;
}

/** Every 32-byte string that decodes one way and not the other: y + p (y < 19) and x = 0 with the sign bit set. */
function nonCanonicalThatDecode(): { readonly bytes: Uint8Array; readonly y: bigint }[] {
  const found: { bytes: Uint8Array; y: bigint }[] = [];
  const candidates: { bytes: Uint8Array; y: bigint }[] = [];
  for (let y = 0n; y < 19n; y++) for (const sign of [false, true]) candidates.push({ bytes: encode(y + P, sign), y });
  for (const y of [1n, P - 1n]) candidates.push({ bytes: encode(y, true), y });
  for (const c of candidates) {
    let decodes = true;
    try {
      Point.fromBytes(c.bytes, true);
    } catch {
      decodes = false;
    }
    if (decodes && rfcDecodes(c.bytes) === undefined) found.push(c);
  }
  return found;
}

const TWENTY_YS = [3n, 4n, 5n, 6n, 9n, 10n, 14n, 15n, 16n, 18n];

describe("the strict rule against a standard cofactorless verify plus the small-order list (SPEC §8.5)", () => {
  const cases = publishedCases();

  it("gives the same verdict on every speccheck, Wycheproof, RFC 8032 and vectors/ed25519 case", () => {
    expect(cases.length).toBe(15 + 151 + 5 + readdirSync(vectorPath("ed25519")).filter((f) => f.endsWith(".json")).length);
    const differ = cases.filter((c) => standardWithList(c.publicKey, c.message, c.signature) !== ours(c.publicKey, c.message, c.signature));
    expect(differ.map((c) => c.name)).toEqual([]);
    // With A decoded as §8.5 decodes it, the standard verify and the list are the rule itself.
    const differLenient = cases.filter(
      (c) => standardWithList(c.publicKey, c.message, c.signature, lenientDecodes) !== ours(c.publicKey, c.message, c.signature),
    );
    expect(differLenient.map((c) => c.name)).toEqual([]);
    // Not vacuous: both accept some and refuse some.
    expect(cases.filter((c) => ours(c.publicKey, c.message, c.signature)).length).toBeGreaterThan(80);
    expect(cases.filter((c) => !ours(c.publicKey, c.message, c.signature)).length).toBeGreaterThan(60);
  });

  it("and on each of the fourteen small-order encodings as R and as A, with a key and signature that are otherwise honest", () => {
    const key = SigningKey.fromSeed(new Uint8Array(32).fill(7));
    const message = new TextEncoder().encode("small order");
    const honest = key.sign(message);
    for (const encoding of SMALL_ORDER_ENCODINGS) {
      const asR = Uint8Array.from([...hex(encoding), ...honest.subarray(32)]);
      expect(ours(key.publicKey, message, asR)).toBe(false);
      expect(standardWithList(key.publicKey, message, asR)).toBe(false);
      expect(ours(hex(encoding), message, honest)).toBe(false);
      expect(standardWithList(hex(encoding), message, honest)).toBe(false);
    }
    expect(standardWithList(key.publicKey, message, honest)).toBe(true);
  });

  it("the two decodings part on 26 strings: 6 are small-order encodings, the other 20 are y + p for ten values of y, with either sign", () => {
    const parting = nonCanonicalThatDecode();
    expect(parting).toHaveLength(26);
    const small = parting.filter((c) => SMALL_ORDER_ENCODINGS.has(toHex(c.bytes)));
    expect(small).toHaveLength(6);
    const others = parting.filter((c) => !SMALL_ORDER_ENCODINGS.has(toHex(c.bytes)));
    expect(others).toHaveLength(20);
    expect([...new Set(others.map((c) => c.y))]).toEqual(TWENTY_YS);
    // Each is a point not of small order, which the strict rule decodes and keeps as a key;
    // a signature under it needs the discrete log of a fixed point, so none is at hand.
    const signature = SigningKey.fromSeed(new Uint8Array(32).fill(8)).sign(new Uint8Array([1]));
    for (const c of others) {
      expect(typeof verifyingKey(c.bytes), toHex(c.bytes)).toBe("object");
      expect(ours(c.bytes, new Uint8Array([1]), signature)).toBe(false);
      expect(standardWithList(c.bytes, new Uint8Array([1]), signature)).toBe(false);
    }
  });

  it("so the fault of §8.4 step 4 is the list's and RFC 8032's, except on those twenty keys", () => {
    const keys = new Map<string, Uint8Array>();
    for (const c of cases) if (c.publicKey.length === 32) keys.set(toHex(c.publicKey), c.publicKey);
    for (const c of nonCanonicalThatDecode()) keys.set(toHex(c.bytes), c.bytes);
    for (const e of SMALL_ORDER_ENCODINGS) keys.set(e, hex(e));
    for (let y = 0n; y < 19n; y++) keys.set(toHex(encode(y, false)), encode(y, false));
    const faultOurs = (a: Uint8Array): string => (verifyingKey(a) === "not_a_point" ? "malformed_public_key" : "decodes");
    const faultList = (a: Uint8Array): string => (SMALL_ORDER_ENCODINGS.has(toHex(a)) || rfcDecodes(a) !== undefined ? "decodes" : "malformed_public_key");
    const differ = [...keys.values()].filter((a) => faultOurs(a) !== faultList(a)).map(toHex);
    const twenty = nonCanonicalThatDecode()
      .filter((c) => !SMALL_ORDER_ENCODINGS.has(toHex(c.bytes)))
      .map((c) => toHex(c.bytes));
    expect(differ.sort()).toEqual(twenty.sort());
    expect(keys.size).toBeGreaterThan(60);
  });
});
