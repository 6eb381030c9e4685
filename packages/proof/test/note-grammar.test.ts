import { createHash } from "node:crypto";
import { SigningKey } from "@aegis/format";
import { describe, expect, it } from "vitest";
import { NoteFormatError, SIGNATURE_TYPE, cosignCheckpoint, noteVerifier, openCheckpoint, parseNote, parseVerifierKey, signCheckpoint } from "../src/index.js";
import { isKeyName } from "../src/internal.js";
import { TLOG_PROOF_HEADER } from "../src/tlog-proof.js";
import { cosignedMessage } from "../src/checkpoint.js";

/** SPEC §19.2-§19.3: the grammar a stranger's reader must share with ours, as C2SP and Go's note package read it. */

const LOG = SigningKey.fromSeed(new Uint8Array(32).fill(3));
const WITNESS = SigningKey.fromSeed(new Uint8Array(32).fill(4));
const ROOT = createHash("sha256").update("root").digest();
const faultOf = (bytes: string): string => {
  try {
    parseNote(Buffer.from(bytes, "utf8"));
    return "parsed";
  } catch (error) {
    if (error instanceof NoteFormatError) return error.fault.code;
    throw error;
  }
};

describe("signed notes (C2SP signed-note, Format)", () => {
  it("a control character is one below U+0020 other than newline; U+007F is none", () => {
    const note = signCheckpoint({ origin: "example.org/g", size: 1, root: ROOT, extensions: ["ext\u007fension"] }, LOG);
    expect(faultOf(note)).toBe("parsed");
    expect(openCheckpoint(Buffer.from(note), [LOG.publicKey]).code).toBe("opened");
    for (const c of ["\t", "\r", "\u0000", "\u001f"]) expect(faultOf(note.replace("ext", `e${c}xt`)), JSON.stringify(c)).toBe("control_character");
  });

  it("a key name is non-empty, holds no + and no White_Space character (U+FEFF is not one)", () => {
    expect(isKeyName("example.org/log")).toBe(true);
    expect(isKeyName("bom\ufeffname")).toBe(true);
    for (const name of ["", "a+b", "a b", "a\u0085b", "a\u00a0b", "a\u2009b", "a\u3000b", "a\u000bb"])
      expect(isKeyName(name), JSON.stringify(name)).toBe(false);
  });

  it("a cosignature line is base64(key ID, 4 bytes || time, 8 bytes big-endian || Ed25519 signature, 64 bytes) over cosignature/v1, time, then the note text", () => {
    const note = signCheckpoint({ origin: "example.org/g", size: 1, root: ROOT, extensions: [] }, LOG);
    const cosigned = cosignCheckpoint(note, WITNESS, "witness.example/w", 1_700_000_000n);
    const line = cosigned.trimEnd().split("\n").at(-1) ?? "";
    expect(line.startsWith("\u2014 witness.example/w ")).toBe(true);
    const blob = Buffer.from(line.split(" ").at(-1) ?? "", "base64");
    expect(blob).toHaveLength(76);
    const id = createHash("sha256")
      .update(Buffer.concat([Buffer.from("witness.example/w\n"), Buffer.from([0x04]), WITNESS.publicKey]))
      .digest()
      .subarray(0, 4);
    expect(blob.subarray(0, 4)).toEqual(id);
    expect(blob.readBigUInt64BE(4)).toBe(1_700_000_000n);
    const text = note.slice(0, note.indexOf("\n\n") + 1);
    expect(cosignedMessage(text, 1_700_000_000n).toString("utf8")).toBe(`cosignature/v1\ntime 1700000000\n${text}`);
    expect(Buffer.from(WITNESS.sign(cosignedMessage(text, 1_700_000_000n)))).toEqual(blob.subarray(12));
  });

  it("a vkey is split at its first two + only: the base64 after them may hold +", () => {
    // Find a witness key whose vkey's base64 holds a +, as about half of them do.
    for (let seed = 0; seed < 64; seed++) {
      const key = SigningKey.fromSeed(new Uint8Array(32).fill(seed));
      const verifier = noteVerifier("w.example/x", SIGNATURE_TYPE.cosignatureV1, key.publicKey);
      const base64 = Buffer.concat([Buffer.from([0x04]), key.publicKey]).toString("base64");
      if (!base64.includes("+")) continue;
      const vkey = `w.example/x+${verifier.keyId.toString(16).padStart(8, "0")}+${base64}`;
      expect(parseVerifierKey(vkey).publicKey).toEqual(Buffer.from(key.publicKey));
      return;
    }
    throw new Error("no key with a + in its base64");
  });

  it("a proof file's first line is the literal c2sp.org/tlog-proof@v1", () => {
    expect(TLOG_PROOF_HEADER).toBe("c2sp.org/tlog-proof@v1");
  });
});
