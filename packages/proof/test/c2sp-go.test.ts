import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { insecureDevKey } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import {
  checkProof,
  formatTlogProof,
  leafHash,
  openCheckpoint,
  parseTlogProof,
  recordInclusionProof,
  recordTree,
  signCheckpoint,
  verifyConsistency,
} from "../src/index.js";
import { recordConsistencyProof } from "../src/record-tree.js";
import { verifyInclusion } from "../src/merkle.js";

/**
 * Checkpoints and proofs over the reference's golden Session made by Go's own C2SP code
 * (`golang.org/x/mod/sumdb/note` and `tlog`; vectors/external/c2sp-go/README.md): ours must
 * be the same bytes, and theirs must check here.
 */
const VECTORS = new URL("../../../vectors/external/", import.meta.url);
const GOLDEN = fileURLToPath(new URL("rust-aegis/golden-session.aarl", VECTORS));
const GO = (file: string): Buffer => readFileSync(new URL(`c2sp-go/${file}`, VECTORS));
const ORIGIN = "example.org/aegis/test";
const DEV = insecureDevKey();
const SIZES = [12, 5] as const;

describe("C2SP checkpoints over the golden Session, against Go's", () => {
  for (const size of SIZES) {
    it(`signs the checkpoint of the first ${size} Lines byte for byte as Go's note package does`, async () => {
      const tree = await recordTree(GOLDEN, { size });
      const note = signCheckpoint({ origin: ORIGIN, size, root: tree.root, extensions: [] }, DEV);
      expect(note).toBe(GO(`size-${size}/checkpoint`).toString("utf8"));
    });

    it(`accepts every Go-made proof of size ${size}, and makes each one byte for byte`, async () => {
      const files = readdirSync(new URL(`c2sp-go/size-${size}/`, VECTORS)).filter((f) => f.endsWith(".tlog-proof"));
      expect(files).toHaveLength(size);
      for (const file of files) {
        const bytes = GO(`size-${size}/${file}`);
        const check = checkProof(bytes, [DEV.publicKey]);
        expect(check.code, file).toBe("included");
        const proof = parseTlogProof(bytes);
        const hashes = await recordInclusionProof(GOLDEN, proof.index, size);
        expect(formatTlogProof({ ...proof, hashes })).toBe(bytes.toString("utf8"));
      }
    });
  }

  it("rejects a Go-made proof with any one byte altered", () => {
    for (const file of ["size-12/0.tlog-proof", "size-12/11.tlog-proof", "size-5/3.tlog-proof"]) {
      const good = GO(file);
      for (let at = 0; at < good.length; at += 1) {
        const bad = Buffer.from(good);
        bad[at] = (bad[at] ?? 0) ^ 0x01;
        const check = checkProof(bad, [DEV.publicKey]);
        expect(check.code, `${file}, byte ${at}`).not.toBe("included");
      }
    }
  });

  it("refuses a proof for another index or another tree size", () => {
    const proof = parseTlogProof(GO("size-12/4.tlog-proof"));
    const opened = openCheckpoint(proof.checkpoint, [DEV.publicKey]);
    if (opened.code !== "opened") throw new Error(opened.code);
    const leaf = leafHash(proof.extra ?? Buffer.alloc(0));
    const { root, size } = opened.checkpoint;
    expect(verifyInclusion(leaf, 4, size, proof.hashes, root)).toBe(true);
    for (const index of [3, 5, 0, 11]) expect(verifyInclusion(leaf, index, size, proof.hashes, root), `index ${index}`).toBe(false);
    // Sizes whose tree puts Line 4 at another depth; one of the same shape (9 to 16) is bound by
    // the signed checkpoint, which states size and root together.
    for (const other of [8, 6, 4, 32]) expect(verifyInclusion(leaf, 4, other, proof.hashes, root), `size ${other}`).toBe(false);
  });

  it("proves the tree of 5 Lines a prefix of the tree of 12, with Go's roots", async () => {
    const five = openCheckpoint(GO("size-5/checkpoint"), [DEV.publicKey]);
    const twelve = openCheckpoint(GO("size-12/checkpoint"), [DEV.publicKey]);
    if (five.code !== "opened" || twelve.code !== "opened") throw new Error("Go's checkpoints must open");
    const proof = await recordConsistencyProof(GOLDEN, 5, 12);
    expect(verifyConsistency(5, 12, proof, five.checkpoint.root, twelve.checkpoint.root)).toBe(true);
    expect(verifyConsistency(5, 12, proof, twelve.checkpoint.root, five.checkpoint.root)).toBe(false);
    expect(verifyConsistency(4, 12, proof, five.checkpoint.root, twelve.checkpoint.root)).toBe(false);
  });

  it("does not open a checkpoint under another key, and ignores signatures of unknown keys", () => {
    const other = insecureDevKey().publicKey.map((b) => b ^ 0xff);
    expect(openCheckpoint(GO("size-12/checkpoint"), [Uint8Array.from(other)]).code).not.toBe("opened");
    const stranger = Buffer.concat([Buffer.from([0, 0, 0, 1]), Buffer.alloc(72, 7)]).toString("base64");
    const withStranger = `${GO("size-12/checkpoint").toString("utf8")}\u2014 witness.example/w1 ${stranger}\n`;
    expect(openCheckpoint(Buffer.from(withStranger), [DEV.publicKey]).code).toBe("opened");
  });
});
