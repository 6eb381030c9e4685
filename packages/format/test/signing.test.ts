import { describe, expect, it } from "vitest";
import { SigningKey, describeVerdict, type JsonObject } from "../src/index.js";
import { checkLineSignature, parseJson, sealLine, verifyingKey } from "../src/internal.js";
import { type SessionKey } from "../src/crypto/signing.js";
import { DEV, reseal } from "./support/chains.js";
import { verifyChainBytes } from "../src/verify/one-pass.js";

/**
 * The signature check of SPEC §8.4, step by step in its order, as recheck and the walk use
 * it, and the signing rule of §4 as the writer uses it.
 */
const OTHER = SigningKey.fromSeed(new Uint8Array(32).fill(5));
const session: SessionKey = { keyId: DEV.keyId, key: verifyingKey(DEV.publicKey) };
const signedClose = JSON.parse(
  reseal([
    { schema_version: 2, line_type: "open", seq: 0 },
    { schema_version: 2, line_type: "close", seq: 1 },
  ]).split("\n")[1] ?? "",
) as Record<string, unknown>;

function check(line: Record<string, unknown>, key: SessionKey = session): unknown {
  return checkLineSignature(parseJson(JSON.stringify(line)) as JsonObject, key);
}

describe("[M8.6] SPEC §8.4: each step's fault, in order", () => {
  it("a Line signed under the Session's key passes", () => {
    expect(check(signedClose)).toBeUndefined();
  });

  it("1. signature or key_id absent: unsigned, whatever the other holds", () => {
    expect(check({ ...signedClose, signature: undefined })).toEqual({ code: "unsigned" });
    expect(check({ ...signedClose, key_id: undefined, signature: 7 })).toEqual({ code: "unsigned" });
  });

  it("2. a signature that is not 128 lowercase hex, or a key_id that is not a digest: bad_signature", () => {
    const signature = String(signedClose["signature"]);
    for (const bad of [7, signature.toUpperCase(), signature.slice(2), `${signature.slice(0, -1)}g`]) {
      expect(check({ ...signedClose, signature: bad }), String(bad)).toEqual({ code: "bad_signature" });
    }
    for (const bad of [7, DEV.keyId.toUpperCase(), DEV.keyId.slice(1)])
      expect(check({ ...signedClose, key_id: bad }), String(bad)).toEqual({ code: "bad_signature" });
  });

  it("3. another key's id: key_mismatch, naming both", () => {
    expect(check({ ...signedClose, key_id: OTHER.keyId })).toEqual({ code: "key_mismatch", expected: DEV.keyId, found: OTHER.keyId });
  });

  it("4. a Session key that is not a point: malformed_public_key; one of small order: bad_signature", () => {
    expect(check(signedClose, { keyId: DEV.keyId, key: "not_a_point" })).toEqual({ code: "malformed_public_key" });
    expect(check(signedClose, { keyId: DEV.keyId, key: "small_order" })).toEqual({ code: "bad_signature" });
  });

  it("5. a signature over other bytes: bad_signature", () => {
    expect(check({ ...signedClose, seq: 2 })).toEqual({ code: "bad_signature" });
  });
});

describe("a signature decoded from a Line", () => {
  it("whose last character is not hex fails, even right after the same signature verified", () => {
    const text = reseal([
      { schema_version: 2, line_type: "open", seq: 0 },
      { schema_version: 2, line_type: "close", seq: 1 },
    ]);
    expect(describeVerdict(verifyChainBytes(text))).toBe("Verified (unpinned)");
    const signature = String(signedClose["signature"]);
    expect(check(signedClose)).toBeUndefined();
    expect(check({ ...signedClose, signature: `${signature.slice(0, -1)}g` })).toEqual({ code: "bad_signature" });
    const rows = text.split("\n");
    rows[1] = (rows[1] ?? "").replace(/"signature":"([0-9a-f]{127})[0-9a-f]"/, '"signature":"$1g"');
    expect(describeVerdict(verifyChainBytes(rows.join("\n")))).toBe("Tampered: line at session 0 seq 1: signature does not match this line");
  });
});

describe("SPEC §4: sealing a Line", () => {
  it("a member outside the value space is refused with its path from $", () => {
    expect(() => sealLine({ line_type: "close", seq: 1.5 }, DEV)).toThrow("floating-point value at $.seq is outside the JCS value space");
    expect(() => sealLine({ line_type: "close", a: { b: null } })).toThrow("null at $.a.b; absent fields must be omitted, never null");
  });

  it("key_id is the signer's, whatever the Line carried, and the signature covers it", () => {
    const sealed = sealLine({ line_type: "close", seq: 1, key_id: OTHER.keyId, signature: "x" }, DEV);
    const line = JSON.parse(sealed.text) as Record<string, unknown>;
    expect(line["key_id"]).toBe(DEV.keyId);
    expect(check(line)).toBeUndefined();
    expect(sealLine({ line_type: "intent", seq: 1 }).text).toBe('{"line_type":"intent","seq":1}');
  });
});
