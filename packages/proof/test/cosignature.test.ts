import { readFileSync } from "node:fs";
import { SigningKey } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import { SIGNATURE_TYPE, VerifierKeyError, cosignCheckpoint, formatVerifierKey, noteVerifier, openCheckpoint, parseVerifierKey } from "../src/index.js";

const CHECKPOINT = readFileSync(new URL("../../../vectors/external/c2sp-go/size-12/checkpoint", import.meta.url), "utf8");
const DEV = insecureDevKey();
const WITNESS = SigningKey.fromSeed(Buffer.alloc(32, 9));
const WITNESS_KEY = noteVerifier("witness.example/w1", SIGNATURE_TYPE.cosignatureV1, WITNESS.publicKey);

describe("witness cosignatures (tlog-cosignature/v1)", () => {
  it("checks a cosignature by a witness given, and reports when it cosigned", () => {
    const cosigned = cosignCheckpoint(CHECKPOINT, WITNESS, "witness.example/w1", 1_780_000_000n);
    const opened = openCheckpoint(Buffer.from(cosigned), [DEV.publicKey], [WITNESS_KEY]);
    expect(opened.code).toBe("opened");
    if (opened.code !== "opened") return;
    expect(opened.cosigned.map((c) => [c.witness.name, c.timestamp])).toEqual([["witness.example/w1", 1_780_000_000n]]);
  });

  it("counts no cosignature where the witness did not cosign, and ignores one by a witness not given", () => {
    const plain = openCheckpoint(Buffer.from(CHECKPOINT), [DEV.publicKey], [WITNESS_KEY]);
    expect(plain.code === "opened" && plain.cosigned.length).toBe(0);
    const stranger = cosignCheckpoint(CHECKPOINT, SigningKey.generate(), "witness.example/w2", 1n);
    const opened = openCheckpoint(Buffer.from(stranger), [DEV.publicKey], [WITNESS_KEY]);
    expect(opened.code === "opened" && opened.cosigned.length).toBe(0);
  });

  it("[M19.1] counts a witness once: its line written twice, its key cosigning again later or under a second name", () => {
    const once = cosignCheckpoint(CHECKPOINT, WITNESS, "witness.example/w1", 1_780_000_000n);
    const lines = once.split("\n");
    const twice = `${once}${lines.at(-2) ?? ""}\n`;
    const later = cosignCheckpoint(once, WITNESS, "witness.example/w1", 1_780_000_500n);
    const alias = noteVerifier("witness.example/w1-alias", SIGNATURE_TYPE.cosignatureV1, WITNESS.publicKey);
    const underAlias = cosignCheckpoint(once, WITNESS, alias.name, 1_780_000_900n);
    const other = SigningKey.fromSeed(Buffer.alloc(32, 10));
    const otherKey = noteVerifier("witness.example/w2", SIGNATURE_TYPE.cosignatureV1, other.publicKey);
    const byTwo = cosignCheckpoint(once, other, otherKey.name, 1_780_000_001n);
    const names = (note: string, witnesses: readonly (typeof WITNESS_KEY)[]): string[] => {
      const opened = openCheckpoint(Buffer.from(note), [DEV.publicKey], witnesses);
      if (opened.code !== "opened") throw new Error(`not opened: ${opened.code}`);
      return opened.cosigned.map((c) => c.witness.name);
    };
    expect(twice.split("\n").filter((l) => l.startsWith("\u2014 witness.example/w1 "))).toHaveLength(2);
    expect(names(twice, [WITNESS_KEY, otherKey])).toEqual(["witness.example/w1"]);
    expect(names(later, [WITNESS_KEY, otherKey])).toEqual(["witness.example/w1"]);
    expect(names(twice, [WITNESS_KEY, WITNESS_KEY])).toEqual(["witness.example/w1"]);
    expect(names(underAlias, [WITNESS_KEY, alias])).toEqual(["witness.example/w1"]);
    // Two keys of their own are two witnesses.
    expect(names(byTwo, [WITNESS_KEY, otherKey])).toEqual(["witness.example/w1", "witness.example/w2"]);
  });

  it("refuses the whole note when a second line by a witness already counted does not check", () => {
    const once = cosignCheckpoint(CHECKPOINT, WITNESS, "witness.example/w1", 7n);
    const later = cosignCheckpoint(once, WITNESS, "witness.example/w1", 8n).split("\n");
    const last = later.at(-2) ?? "";
    const blob = Buffer.from(last.split(" ").at(-1) ?? "", "base64");
    blob.writeBigUInt64BE(9n, 4);
    later[later.length - 2] = `${last.slice(0, last.lastIndexOf(" "))} ${blob.toString("base64")}`;
    expect(openCheckpoint(Buffer.from(later.join("\n")), [DEV.publicKey], [WITNESS_KEY])).toMatchObject({ code: "bad_signature", name: "witness.example/w1" });
  });

  it("refuses the whole note when a given witness's cosignature does not check", () => {
    const cosigned = cosignCheckpoint(CHECKPOINT, WITNESS, "witness.example/w1", 5n);
    // The same signature under another claimed time: the message it signs differs.
    const lines = cosigned.split("\n");
    const last = lines.at(-2) ?? "";
    const blob = Buffer.from(last.split(" ").at(-1) ?? "", "base64");
    blob.writeBigUInt64BE(6n, 4);
    lines[lines.length - 2] = `${last.slice(0, last.lastIndexOf(" "))} ${blob.toString("base64")}`;
    const opened = openCheckpoint(Buffer.from(lines.join("\n")), [DEV.publicKey], [WITNESS_KEY]);
    expect(opened).toMatchObject({ code: "bad_signature", name: "witness.example/w1" });
  });

  it("reads back every key it writes in the vkey form, a + in the base64 included", () => {
    for (let i = 0; i < 64; i += 1) {
      const verifier = noteVerifier("witness.example/w1", SIGNATURE_TYPE.cosignatureV1, SigningKey.generate().publicKey);
      expect(parseVerifierKey(formatVerifierKey(verifier)).keyId).toBe(verifier.keyId);
    }
  });

  it("reads and writes witness keys in the vkey form, checking the stated key ID", () => {
    const text = formatVerifierKey(WITNESS_KEY);
    expect(text).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
    expect(parseVerifierKey(text)).toMatchObject({ name: "witness.example/w1", keyId: WITNESS_KEY.keyId, type: 0x04 });
    const wrongId = text.replace(/\+[0-9a-f]{8}\+/, "+00000000+");
    expect(() => parseVerifierKey(wrongId)).toThrow(VerifierKeyError);
    expect(() => parseVerifierKey("no-plus-signs")).toThrow(/<name>\+<8 hex>\+<base64>/);
  });
});
