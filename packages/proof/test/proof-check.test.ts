import { SigningKey } from "@aegis/format";
import { sealLine } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import { checkProof, formatTlogProof, leafHash, signCheckpoint } from "../src/index.js";
import { type ProofCheckCode } from "../src/proof-check.js";

/**
 * SPEC §19.3: each result of checking a tlog-proof, and the order the checks are made in.
 * Each proof below holds two faults, and the one checked first must be the answer.
 */

const LOG = SigningKey.fromSeed(new Uint8Array(32).fill(5));
const OTHER = SigningKey.fromSeed(new Uint8Array(32).fill(6));
const ORIGIN = "example.org/proof-check";

/** A proof of `extra` as the only leaf of a tree of one, under a checkpoint `LOG` signs. */
function proofOf(extra: Buffer | undefined, change: { index?: number; hashes?: Buffer[]; root?: Buffer; header?: string } = {}): Buffer {
  const root = change.root ?? leafHash(extra ?? Buffer.alloc(0));
  const checkpoint = Buffer.from(signCheckpoint({ origin: ORIGIN, size: 1, root, extensions: [] }, LOG));
  const text = formatTlogProof({ extra, index: change.index ?? 0, hashes: change.hashes ?? [], checkpoint });
  return Buffer.from(change.header === undefined ? text : text.replace("c2sp.org/tlog-proof@v1", change.header));
}

const code = (bytes: Buffer, keys: readonly SigningKey[] = [LOG]): ProofCheckCode | string => {
  const check = checkProof(
    bytes,
    keys.map((k) => k.publicKey),
  );
  return check.code === "checkpoint_refused" ? `checkpoint_refused:${check.opening.code}` : check.code;
};

const signedLine = (key: SigningKey): Buffer => Buffer.from(sealLine({ schema_version: 2, line_type: "close", seq: 1, prev_hash: "a".repeat(64) }, key).text);
const FLOAT = Buffer.from(`{"key_id":"${LOG.keyId}","line_type":"close","seq":1.5,"signature":"${"0".repeat(128)}"}`);

describe("checking a tlog-proof: each result, in the order of SPEC §19.3", () => {
  it("1. malformed: the header is checked before the checkpoint is opened", () => {
    expect(code(proofOf(signedLine(LOG), { header: "c2sp.org/tlog-proof@v2" }), [OTHER])).toBe("malformed");
  });

  it("2. checkpoint_refused: the checkpoint is opened before the entry is looked for", () => {
    expect(code(proofOf(undefined), [OTHER])).toBe("checkpoint_refused:unsigned");
  });

  it("3. no_entry: a proof without extra, before its index is compared with the size", () => {
    expect(code(proofOf(undefined, { index: 7 }))).toBe("no_entry");
  });

  it("4. index_out_of_range: before the hashes are followed", () => {
    expect(code(proofOf(Buffer.from("not json"), { index: 1 }))).toBe("index_out_of_range");
  });

  it("5. not_included: the hashes are followed before the entry is read as a Line", () => {
    expect(code(proofOf(Buffer.from("not json"), { root: leafHash("another leaf") }))).toBe("not_included");
  });

  it("6. not_a_line: an entry that does not parse, has no canonical form, is not UTF-8 or is not an object, before any signature", () => {
    expect(code(proofOf(Buffer.from("not json")))).toBe("not_a_line");
    // A float, with a key_id that names the log key: no canonical form, so no signing input.
    expect(code(proofOf(FLOAT))).toBe("not_a_line");
    expect(code(proofOf(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])))).toBe("not_a_line");
    expect(code(proofOf(Buffer.from("[1,2]")))).toBe("not_a_line");
    const check = checkProof(proofOf(FLOAT), [LOG.publicKey]);
    expect(check).toMatchObject({ code: "not_a_line", index: 0 });
    if (check.code === "not_a_line")
      expect(check.detail).toMatch(/^outside the canonical value space, so it has no reproducible hash: floating-point value at \$\.seq /);
  });

  it("7. bad_line_signature: a signature present that does not check under the checkpoint's key", () => {
    expect(code(proofOf(signedLine(OTHER)))).toBe("bad_line_signature");
    const stripped = Buffer.from(
      signedLine(LOG)
        .toString("utf8")
        .replace(/"key_id":"[0-9a-f]+",/, ""),
    );
    expect(code(proofOf(stripped))).toBe("bad_line_signature");
  });

  it("8. included: signed when the Line's own signature checks, unsigned when it carries none", () => {
    const signed = checkProof(proofOf(signedLine(LOG)), [LOG.publicKey]);
    expect(signed).toMatchObject({ code: "included", lineSignature: "signed" });
    const intent = Buffer.from(sealLine({ schema_version: 2, line_type: "intent", seq: 1, prev_hash: "a".repeat(64), call_id: "c" }).text);
    expect(checkProof(proofOf(intent), [LOG.publicKey])).toMatchObject({ code: "included", lineSignature: "unsigned" });
  });
});
