import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Point } from "@noble/ed25519";
import { beforeAll, describe, expect, it } from "vitest";
import { SigningKey } from "../src/index.js";
import { verifyStrict, verifyingKey } from "../src/internal.js";
import { SMALL_ORDER_ENCODINGS } from "../src/crypto/ed25519.js";
import { dalekStrict, type OracleResult } from "./support/dalek-oracle.js";
import { hex, readVectorJson, vectorPath } from "./support/vectors.js";

/**
 * Published Ed25519 vectors run against the strict rule of SPEC §8.5 (dalek `verify_strict`):
 * RFC 8032 §7.1 (vectors/external/rfc8032/) and Wycheproof's ed25519_test.json
 * (vectors/external/wycheproof/). See each directory's SOURCE.md.
 *
 * `vectors/external/wycheproof/expected.json` is our verdict on every Wycheproof case;
 * `AEGIS_WRITE_VECTORS=1` rewrites it. Any case where the strict rule and Wycheproof part
 * must be listed in DIFFERS below, by hand, with its reason.
 */

interface RfcVector {
  readonly name: string;
  readonly secret_key: string;
  readonly public_key: string;
  readonly message: string;
  readonly signature: string;
}

type WycheproofResult = "valid" | "invalid" | "acceptable";
interface WycheproofTest {
  readonly tcId: number;
  readonly comment: string;
  readonly flags: readonly string[];
  readonly msg: string;
  readonly sig: string;
  readonly result: WycheproofResult;
}
interface WycheproofFile {
  readonly algorithm: string;
  readonly schema: string;
  readonly numberOfTests: number;
  readonly header: readonly string[];
  readonly notes: Record<string, { bugType: string; description: string; effect?: string }>;
  readonly testGroups: readonly {
    readonly type: string;
    readonly source: { name: string; version: string };
    readonly publicKey: { type: string; curve: string; keySize: number; pk: string };
    readonly tests: readonly WycheproofTest[];
  }[];
}
interface Expected {
  readonly tcId: number;
  readonly wycheproof: WycheproofResult;
  readonly strict: "valid" | "invalid";
  readonly why?: string;
}

const rfc = readVectorJson<RfcVector[]>("external/rfc8032/vectors.json");
const wycheproof = readVectorJson<WycheproofFile>("external/wycheproof/ed25519_test.json");
const cases = wycheproof.testGroups.flatMap((g) => g.tests.map((t) => ({ ...t, pk: g.publicKey.pk })));
const byId = (tcId: number): (typeof cases)[number] => {
  const found = cases.find((c) => c.tcId === tcId);
  if (found === undefined) throw new Error(`no tcId ${tcId}`);
  return found;
};

/**
 * Where Wycheproof's `result` and the strict rule disagree, with the reason, found by
 * inspecting the case (see `diagnose`). Empty: on every one of the 151 cases the strict
 * rule gives Wycheproof's answer. A case added here must also appear in expected.json.
 */
const DIFFERS: Readonly<Record<number, string>> = {};

/**
 * The step at which the strict rule refuses each Wycheproof `invalid` case, as the
 * independent oracle (support/dalek-oracle.ts) reports it, checked by hand against each
 * case's comment and bytes. It pins the reason for every refusal, so a case that comes to
 * be refused for another reason is noticed. Keys are the oracle's step names, plus
 * `length` for signatures that are not 64 bytes.
 */
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const REFUSED_BY_HAND: Readonly<Record<OracleResult | "length", readonly number[]>> = {
  valid: [],
  // Truncated, padded, or a byte removed (tcIds 30 to 41).
  length: range(30, 41),
  // S = L or S = p (special values); s + kL, s + 2^253, 2^254, 2^255, s + p; "S just above the bound".
  step1_s_not_canonical: [13, 14, 18, 19, 23, 24, 28, 29, ...range(63, 70), 85],
  // R = 0, R = p (y = 0, a point of order 4, spelled canonically and as y + p), R = 1 (the
  // identity), and R encoding y = 1 with the sign bit set (the identity again, as dalek decodes it).
  step2_r_small_order: [10, 11, 12, 15, 16, 17, 25, 26, 27, 60, 151],
  // R = L read as a y-coordinate, and the bit flips of R that leave no point.
  step2_r_not_a_point: [20, 21, 22, 43, 45, 46, 50, 54, 55, 58],
  step3_a_not_a_point: [],
  step3_a_small_order: [],
  // The other bit flips of R (Wycheproof recomputed S so that the R recovered from the
  // equation is the original R, which is not the R given), R with every bit flipped, and
  // R = ff..ff, which decodes (y = 2^255 - 1 read mod p) but is not the canonical encoding
  // the equation produces: the cofactorless equation fails.
  step4_equation: [42, 44, 47, 48, 49, 51, 52, 53, 56, 57, 59, 61, 62],
};

function strict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = verifyingKey(publicKey);
  return typeof key !== "string" && verifyStrict(key, message, signature);
}

const L = Point.CURVE().n;
const P = Point.CURVE().p;
function littleEndian(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).reverse().toString("hex") || "0"}`);
}

/** What a case's bytes are, as far as the strict rule cares: used to word a difference. */
function diagnose(pk: string, sig: string): string {
  const signature = hex(sig);
  if (signature.length !== 64) return `signature of ${signature.length} bytes, not 64`;
  const r = sig.slice(0, 64);
  if (littleEndian(signature.subarray(32)) >= L) return "S >= L: dalek verify_strict refuses a non-canonical scalar";
  if (SMALL_ORDER_ENCODINGS.has(r)) return "small-order R: dalek verify_strict refuses";
  if ((littleEndian(hex(r)) & ((1n << 255n) - 1n)) >= P) return "non-canonical R encoding (y >= p)";
  if (SMALL_ORDER_ENCODINGS.has(pk)) return "small-order A: dalek verify_strict refuses";
  if ((littleEndian(hex(pk)) & ((1n << 255n) - 1n)) >= P) return "non-canonical A encoding (y >= p)";
  return "cofactorless equation [S]B = R + [k]A decides";
}

function verdicts(): Expected[] {
  return cases.map((c) => {
    const ours = strict(hex(c.pk), hex(c.msg), hex(c.sig)) ? "valid" : "invalid";
    return c.result === ours
      ? { tcId: c.tcId, wycheproof: c.result, strict: ours }
      : { tcId: c.tcId, wycheproof: c.result, strict: ours, why: diagnose(c.pk, c.sig) };
  });
}

describe("RFC 8032 §7.1 test vectors", () => {
  it("are the five of the RFC: TEST 1, 2, 3, 1024 and SHA(abc), with messages of 0, 1, 2, 1023 and 64 bytes", () => {
    expect(rfc.map((v) => v.name)).toEqual(["TEST 1", "TEST 2", "TEST 3", "TEST 1024", "TEST SHA(abc)"]);
    expect(rfc.map((v) => v.message.length / 2)).toEqual([0, 1, 2, 1023, 64]);
    for (const v of rfc) {
      expect(v.secret_key, v.name).toMatch(/^[0-9a-f]{64}$/);
      expect(v.public_key, v.name).toMatch(/^[0-9a-f]{64}$/);
      expect(v.message, v.name).toMatch(/^([0-9a-f]{2})*$/);
      expect(v.signature, v.name).toMatch(/^[0-9a-f]{128}$/);
    }
    // TEST SHA(abc) signs the SHA-512 of "abc".
    expect(rfc[4]?.message).toBe(createHash("sha512").update("abc").digest("hex"));
  });

  it("agree with Wycheproof's copies of TEST 1, 2, 3 and 1024 (tcIds 80 to 83), transcribed from another source", () => {
    for (const [index, tcId] of [
      [0, 80],
      [1, 81],
      [2, 82],
      [3, 83],
    ] as const) {
      const v = rfc[index];
      const c = byId(tcId);
      expect(c.comment).toBe(`draft-josefsson-eddsa-ed25519-02: ${v?.name.replace("TEST", "Test")}`);
      expect([c.pk, c.msg, c.sig]).toEqual([v?.public_key, v?.message, v?.signature]);
    }
  });

  it.each(rfc)("$name: the seed gives the public key, our signature is the RFC's byte for byte, and the strict rule accepts it", (v) => {
    const key = SigningKey.fromSeed(hex(v.secret_key));
    expect(key.publicKeyHex).toBe(v.public_key);
    const message = hex(v.message);
    expect(Buffer.from(key.sign(message)).toString("hex")).toBe(v.signature);
    expect(strict(hex(v.public_key), message, hex(v.signature))).toBe(true);
    expect(dalekStrict(message, hex(v.public_key), hex(v.signature))).toBe("valid");
  });
});

describe("Wycheproof ed25519_test.json", () => {
  let computed: Expected[];
  beforeAll(() => {
    computed = verdicts();
    if (process.env["AEGIS_WRITE_VECTORS"] === "1") {
      writeFileSync(vectorPath("external/wycheproof/expected.json"), `${JSON.stringify(computed, null, 2)}\n`);
    }
  });

  it("is whole: 151 tests with tcIds 1 to 151, hex everywhere, 32-byte keys", () => {
    expect(wycheproof.algorithm).toBe("EDDSA");
    expect(wycheproof.schema).toBe("eddsa_verify_schema_v1.json");
    expect(wycheproof.numberOfTests).toBe(151);
    expect(cases).toHaveLength(151);
    expect(cases.map((c) => c.tcId)).toEqual(range(1, 151));
    for (const g of wycheproof.testGroups) {
      expect(g.type).toBe("EddsaVerify");
      expect(g.publicKey).toMatchObject({ type: "EDDSAPublicKey", curve: "edwards25519", keySize: 255 });
      expect(g.publicKey.pk).toMatch(/^[0-9a-f]{64}$/);
    }
    for (const c of cases) {
      expect(c.msg, `tcId ${c.tcId} msg`).toMatch(/^([0-9a-f]{2})*$/);
      expect(c.sig, `tcId ${c.tcId} sig`).toMatch(/^([0-9a-f]{2})*$/);
      expect(["valid", "invalid", "acceptable"]).toContain(c.result);
      for (const flag of c.flags) expect(Object.keys(wycheproof.notes), `tcId ${c.tcId}`).toContain(flag);
    }
  });

  it("signatures are 64 bytes except the truncated and padded cases, tcIds 30 to 41", () => {
    const lengths = Object.fromEntries(cases.filter((c) => c.sig.length !== 128).map((c) => [c.tcId, c.sig.length / 2]));
    expect(lengths).toEqual({ 30: 0, 31: 32, 32: 62, 33: 66, 34: 96, 35: 65, 36: 65, 37: 65, 38: 63, 39: 63, 40: 63, 41: 63 });
  });

  it("a signature or key of the wrong length is refused, not thrown on", () => {
    for (const c of cases.filter((x) => x.sig.length !== 128)) {
      const key = verifyingKey(hex(c.pk));
      if (typeof key === "string") throw new Error(`tcId ${c.tcId}: key refused`);
      expect(() => verifyStrict(key, hex(c.msg), hex(c.sig)), `tcId ${c.tcId}`).not.toThrow();
      expect(verifyStrict(key, hex(c.msg), hex(c.sig)), `tcId ${c.tcId}`).toBe(false);
    }
    for (const length of [0, 31, 33, 64]) expect(verifyingKey(new Uint8Array(length)), `${length}-byte key`).toBe("not_a_point");
  });

  it("the strict rule differs from Wycheproof on exactly the cases listed in DIFFERS, for the reasons given", () => {
    const differing = computed.filter((e) => e.why !== undefined);
    expect(Object.fromEntries(differing.map((e) => [e.tcId, e.why]))).toEqual(DIFFERS);
    const counts = { valid: 0, invalid: 0, acceptable: 0 };
    for (const c of cases) counts[c.result] += 1;
    expect(counts).toEqual({ valid: 88, invalid: 63, acceptable: 0 });
  });

  it("each refusal is for the reason stated by hand, and the production path agrees with the oracle", () => {
    const refused: Record<string, number[]> = Object.fromEntries(Object.keys(REFUSED_BY_HAND).map((k) => [k, []]));
    for (const c of cases) {
      const signature = hex(c.sig);
      const ours = strict(hex(c.pk), hex(c.msg), signature);
      if (signature.length !== 64) {
        expect(ours).toBe(false);
        refused["length"]?.push(c.tcId);
        continue;
      }
      const oracle = dalekStrict(hex(c.msg), hex(c.pk), signature);
      expect(ours, `tcId ${c.tcId}: production against oracle (${oracle})`).toBe(oracle === "valid");
      if (oracle !== "valid") refused[oracle]?.push(c.tcId);
    }
    expect(refused).toEqual(REFUSED_BY_HAND);
  });

  it("the reason a difference would be given is the one the bytes show", () => {
    const why = (tcId: number): string => diagnose(byId(tcId).pk, byId(tcId).sig);
    expect(why(30)).toBe("signature of 0 bytes, not 64");
    expect(why(34)).toBe("signature of 96 bytes, not 64");
    expect(why(63)).toBe("S >= L: dalek verify_strict refuses a non-canonical scalar");
    expect(why(151)).toBe("small-order R: dalek verify_strict refuses");
    expect(why(61)).toBe("non-canonical R encoding (y >= p)");
    expect(why(1)).toBe("cofactorless equation [S]B = R + [k]A decides");
  });

  it("expected.json is the strict rule's verdict on each case", () => {
    expect(existsSync(vectorPath("external/wycheproof/expected.json"))).toBe(true);
    const committed = JSON.parse(readFileSync(vectorPath("external/wycheproof/expected.json"), "utf8")) as Expected[];
    expect(committed).toEqual(computed);
  });
});
