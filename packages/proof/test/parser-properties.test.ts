// Properties of the two parsers of attacker-supplied text (design.md §8: a handed-over note or
// proof is the agent's to forge): any bytes are parsed or refused with the parser's own typed
// error, never another throw; what the formatter writes parses back to what it was given; and
// no single altered byte of a valid checkpoint or proof still opens or checks.
import { SigningKey } from "@aegis/format";
import { sealLine } from "@aegis/format/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openCheckpoint, signCheckpoint } from "../src/checkpoint.js";
import { leafHash } from "../src/merkle.js";
import { MAX_NOTE_SIGNATURES, NoteFormatError, formatNote, parseNote, signatureLine, type NoteFault } from "../src/note.js";
import { checkProof } from "../src/proof-check.js";
import { ProofFormatError, TLOG_PROOF_HEADER, formatTlogProof, parseTlogProof, type ProofFormatFault, type TlogProof } from "../src/tlog-proof.js";

const LOG = SigningKey.fromSeed(new Uint8Array(32).fill(5));
const ORIGIN = "example.org/properties";

const NOTE_FAULTS: readonly NoteFault["code"][] = [
  "too_large",
  "not_utf8",
  "control_character",
  "no_signatures",
  "too_many_signatures",
  "bad_signature_line",
  "not_a_checkpoint",
];
const PROOF_FAULTS: readonly ProofFormatFault["code"][] = ["too_large", "bad_header", "bad_extra", "bad_index", "bad_hash", "too_many_hashes", "no_checkpoint"];

/** The outcome of `parse` on `bytes`: its value, or its typed fault; any other throw escapes and fails the property. */
function attempt<T>(parse: () => T): { readonly parsed: T } | { readonly refused: string } {
  try {
    return { parsed: parse() };
  } catch (error) {
    if (error instanceof NoteFormatError || error instanceof ProofFormatError) return { refused: error.fault.code };
    throw error;
  }
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Text a note may carry: no control character but newline, ending in one. */
const noteText = fc
  .array(fc.string({ unit: fc.constantFrom("a", "Z", "0", " ", "+", "—", "é", "\u007f", "=", "/", "\u{1F600}"), maxLength: 12 }), {
    minLength: 1,
    maxLength: 6,
  })
  .map((lines) => `${lines.join("\n")}\n`);
const keyName = fc.string({ unit: fc.constantFrom("a", "b", ".", "/", "-", "é", "—"), minLength: 1, maxLength: 10 });
const signature = fc.record({ name: keyName, keyId: fc.nat({ max: 0xffffffff }), signature: fc.uint8Array({ minLength: 1, maxLength: 80 }) });

/** Bytes near a note: pieces of one, shuffled, with arbitrary bytes between. */
const noteLike = fc
  .array(
    fc.oneof(
      fc.constantFrom("\n", "\n\n", "— ", "—", " ", "+", "=", "AAAA", "AAAAAQ==", "origin\n", "1\n", "\t", "\r"),
      fc.string({ maxLength: 8 }),
      fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString("latin1")),
    ),
    { maxLength: 30 },
  )
  .map((parts) => bytes(parts.join("")));

describe("parseNote (C2SP signed-note): attacker-supplied bytes", () => {
  it("any bytes are a Note or a NoteFormatError with a known fault, never another throw", () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), noteLike), (input) => {
        const result = attempt(() => parseNote(input));
        if ("refused" in result) expect(NOTE_FAULTS).toContain(result.refused);
        else expect(result.parsed.signatures.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it("parseNote(formatNote(text, lines)) gives back the text and every signature", () => {
    fc.assert(
      fc.property(noteText, fc.array(signature, { minLength: 1, maxLength: 5 }), (text, signatures) => {
        const lines = signatures.map((s) => signatureLine(s.name, s.keyId, s.signature));
        const note = parseNote(bytes(formatNote(text, lines)));
        expect(note.text).toBe(text);
        expect(note.signatures.map((s) => ({ name: s.name, keyId: s.keyId, signature: new Uint8Array(s.signature), line: s.line }))).toEqual(
          signatures.map((s, i) => ({ name: s.name, keyId: s.keyId, signature: new Uint8Array(s.signature), line: lines[i] })),
        );
      }),
      { numRuns: 500 },
    );
  });

  it("a note with more signature lines than the limit is refused by count, not read", () => {
    const line = signatureLine("k", 1, new Uint8Array([1]));
    const result = attempt(() =>
      parseNote(
        bytes(
          formatNote(
            "t\n",
            Array.from({ length: MAX_NOTE_SIGNATURES + 1 }, () => line),
          ),
        ),
      ),
    );
    expect(result).toEqual({ refused: "too_many_signatures" });
  });
});

/** A checkpoint of a tree of one leaf, `leaf`, signed by LOG. */
function checkpointOf(leaf: Uint8Array): Buffer {
  return Buffer.from(signCheckpoint({ origin: ORIGIN, size: 1, root: leafHash(leaf), extensions: [] }, LOG));
}

describe("openCheckpoint: a valid checkpoint with one byte altered", () => {
  const valid = checkpointOf(bytes("leaf"));

  it("the unaltered checkpoint opens (the property below is not vacuous)", () => {
    expect(openCheckpoint(valid, [LOG.publicKey]).code).toBe("opened");
  });

  it("every byte, changed to any other value, is refused: malformed, unsigned or a bad signature", () => {
    fc.assert(
      fc.property(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, delta) => {
        const altered = Buffer.from(valid);
        altered[at] = ((altered[at] ?? 0) + delta) & 0xff;
        expect(openCheckpoint(altered, [LOG.publicKey]).code).not.toBe("opened");
      }),
      { numRuns: 3000 },
    );
  });
});

const hash32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b));
const tlogProof: fc.Arbitrary<TlogProof> = fc.record({
  extra: fc.option(
    fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
    { nil: undefined },
  ),
  index: fc.maxSafeNat(),
  hashes: fc.array(hash32, { maxLength: 64 }),
  // The checkpoint is carried unopened, as bytes: any non-empty UTF-8 text.
  checkpoint: fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }).map((s) => Buffer.from(s, "utf8")),
});

/** Bytes near a proof file: its lines, shuffled, with arbitrary bytes between. */
const proofLike = fc
  .array(
    fc.oneof(
      fc.constantFrom(`${TLOG_PROOF_HEADER}\n`, "extra ", "index ", "0", "01", "9007199254740993", "\n", "\n\n", "AAAA", `${"A".repeat(43)}=\n`, "="),
      fc.string({ maxLength: 8 }),
      fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString("latin1")),
    ),
    { maxLength: 30 },
  )
  .map((parts) => bytes(parts.join("")));

describe("parseTlogProof (c2sp.org/tlog-proof): attacker-supplied bytes", () => {
  it("any bytes are a proof or a ProofFormatError with a known fault, never another throw; checkProof always answers", () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), proofLike), (input) => {
        const result = attempt(() => parseTlogProof(input));
        if ("refused" in result) expect(PROOF_FAULTS).toContain(result.refused);
        expect(checkProof(input, [LOG.publicKey]).code).not.toBe("included");
      }),
      { numRuns: 2000 },
    );
  });

  it("parseTlogProof(formatTlogProof(proof)) is the proof", () => {
    fc.assert(
      fc.property(tlogProof, (proof) => {
        expect(parseTlogProof(bytes(formatTlogProof(proof)))).toEqual(proof);
      }),
      { numRuns: 500 },
    );
  });
});

describe("checkProof: a valid proof with one byte altered", () => {
  const line = Buffer.from(sealLine({ schema_version: 2, line_type: "close", seq: 1, prev_hash: "a".repeat(64) }, LOG).text);
  const valid = Buffer.from(formatTlogProof({ extra: line, index: 0, hashes: [], checkpoint: checkpointOf(line) }));

  it("the unaltered proof is included (the property below is not vacuous)", () => {
    expect(checkProof(valid, [LOG.publicKey]).code).toBe("included");
  });

  it("every byte, changed to any other value, is refused or does not check", () => {
    fc.assert(
      fc.property(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, delta) => {
        const altered = Buffer.from(valid);
        altered[at] = ((altered[at] ?? 0) + delta) & 0xff;
        expect(checkProof(altered, [LOG.publicKey]).code).not.toBe("included");
      }),
      { numRuns: 3000 },
    );
  });
});
