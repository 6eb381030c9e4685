import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { SigningKey } from "@aegis/format";
import { insecureDevKey } from "@aegis/format/internal";
import { answerVector, type Ed25519Case } from "@aegis/vectors/oracle";
import type { Polarity, VectorSet } from "./vector-set.js";

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

function littleEndian(n: bigint): string {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return hex(out);
}

function readLittleEndian(h: string): bigint {
  return BigInt(`0x${Buffer.from(h, "hex").reverse().toString("hex")}`);
}

/**
 * SPEC §8.5: one signature, one verdict. Cases built from one honest signature by the
 * development key, each changed in one way, then every ed25519-speccheck case.
 */
export async function ed25519Vectors(set: VectorSet, source: string): Promise<void> {
  const key = insecureDevKey();
  const message = new TextEncoder().encode(
    '{"line_type":"close","prev_hash":"0000000000000000000000000000000000000000000000000000000000000000","schema_version":2,"seq":1}',
  );
  const signature = hex(key.sign(message));
  const r = signature.slice(0, 64);
  const s = readLittleEndian(signature.slice(64));
  const pk = hex(key.publicKey);
  const msg = hex(message);
  const other = SigningKey.fromSeed(new Uint8Array(32).fill(9));
  const identity = `01${"00".repeat(31)}`;

  const cases: readonly (readonly [string, Polarity, Ed25519Case, string])[] = [
    ["honest", "positive", { public_key: pk, message: msg, signature }, "An honest signature by the development key over a close Line's signing input."],
    ["empty_message", "positive", { public_key: pk, message: "", signature: hex(key.sign(new Uint8Array())) }, "The empty message signs and verifies."],
    ["one_bit_flipped_in_r", "negative", { public_key: pk, message: msg, signature: flip(signature, 10) }, "Bit 0 of byte 10 (inside R) flipped."],
    ["one_bit_flipped_in_s", "negative", { public_key: pk, message: msg, signature: flip(signature, 40) }, "Bit 0 of byte 40 (inside S) flipped."],
    ["message_altered", "negative", { public_key: pk, message: flip(msg, 0), signature }, "The honest signature over a message with one bit changed."],
    ["other_key", "negative", { public_key: hex(other.publicKey), message: msg, signature }, "The honest signature checked under another key."],
    [
      "s_plus_l",
      "negative",
      { public_key: pk, message: msg, signature: r + littleEndian(s + L) },
      "S replaced by S + L: the malleated twin; S must be below L.",
    ],
    ["s_equals_l", "negative", { public_key: pk, message: msg, signature: r + littleEndian(L) }, "S = L exactly is not canonical."],
    ["s_all_ones", "negative", { public_key: pk, message: msg, signature: r + "ff".repeat(32) }, "S = 2^256 - 1: far above L."],
    [
      "universal_r_identity_s_zero",
      "negative",
      { public_key: pk, message: msg, signature: identity + "00".repeat(32) },
      "R = identity, S = 0: verifies any message under ZIP-215 rules and was accepted by @noble/ed25519 3.0.0; R is of small order.",
    ],
    [
      "small_order_key_identity",
      "negative",
      { public_key: identity, message: msg, signature: identity + "00".repeat(32) },
      "A = identity (small order) with R = identity, S = 0: the equation holds, the key is refused.",
    ],
    [
      "small_order_key_order_2",
      "negative",
      { public_key: `ec${"ff".repeat(30)}7f`, message: msg, signature },
      "A = (0, -1), of order 2: refused before any arithmetic.",
    ],
    [
      "noncanonical_key_encoding",
      "negative",
      { public_key: `ed${"ff".repeat(30)}7f`, message: msg, signature },
      "A encodes y = p: not canonical (and of small order).",
    ],
    ["key_not_on_curve", "negative", { public_key: `02${"00".repeat(31)}`, message: msg, signature }, "y = 2 has no x on the curve: not a point."],
    [
      "signature_63_bytes",
      "negative",
      { public_key: pk, message: msg, signature: signature.slice(0, 126) },
      "A signature one byte short is refused, not padded.",
    ],
    [
      "signature_65_bytes",
      "negative",
      { public_key: pk, message: msg, signature: `${signature}00` },
      "A signature with one byte of garbage appended is refused.",
    ],
    ["key_31_bytes", "negative", { public_key: pk.slice(0, 62), message: msg, signature }, "A public key one byte short is refused."],
    ["signature_zero", "negative", { public_key: pk, message: msg, signature: "00".repeat(64) }, "An all-zero signature (R encodes y = 0, small order)."],
  ];
  for (const [name, polarity, c, description] of cases) await add(set, `ed25519/${name}`, polarity, c, description, ["ed25519"]);

  const spec = JSON.parse(await readFile(join(source, "external/ed25519-speccheck/cases.json"), "utf8")) as {
    message: string;
    pub_key: string;
    signature: string;
  }[];
  const verdicts = JSON.parse(await readFile(join(source, "external/ed25519-speccheck/expected.json"), "utf8")) as {
    cases: { index: number; valid: boolean; rejected_at: string | null }[];
  };
  for (const [index, c] of spec.entries()) {
    const verdict = verdicts.cases.find((v) => v.index === index);
    if (verdict === undefined) throw new Error(`ed25519-speccheck case ${index} has no expected verdict`);
    const why = verdict.rejected_at === null ? "accepted by dalek verify_strict" : `refused by dalek verify_strict at ${verdict.rejected_at}`;
    await add(
      set,
      `ed25519/speccheck_${String(index).padStart(2, "0")}`,
      verdict.valid ? "positive" : "negative",
      { public_key: c.pub_key, message: c.message, signature: c.signature },
      `ed25519-speccheck case ${index}: ${why}.`,
      ["ed25519", "speccheck"],
    );
  }
}

async function add(set: VectorSet, id: string, polarity: Polarity, c: Ed25519Case, description: string, topics: readonly string[]): Promise<void> {
  const path = set.file(`${id}.json`, `${JSON.stringify(c, null, 2)}\n`);
  const expected = await answerVector({ kind: "ed25519", case: c });
  if (expected.valid !== (polarity === "positive")) throw new Error(`${id}: ${polarity} case answered valid=${expected.valid}`);
  set.add({ id, kind: "ed25519", description, spec: ["8.5"], flags: [polarity, ...topics], input: { case: path }, expected });
}

/** Flip bit 0 of byte `index` of a hex string. */
function flip(h: string, index: number): string {
  const bytes = Buffer.from(h, "hex");
  bytes[index] = (bytes[index] ?? 0) ^ 1;
  return bytes.toString("hex");
}
