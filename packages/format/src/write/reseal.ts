import { PrevHash } from "../wire/digest.js";
import type { SigningKey } from "../crypto/keys.js";
import { sealLine } from "../crypto/signing.js";

export type LooseLine = Record<string, unknown>;

export interface ResealOptions {
  /** The key that signs every signed Line not named in `signWith`. */
  readonly key: SigningKey;
  /** Recompute every `prev_hash` (and each later `open`'s `prev_session_tail`). Default true. */
  readonly chain?: boolean;
  /** Indices of Lines to leave unsigned, whatever their type. */
  readonly unsigned?: readonly number[];
  /** Indices of Lines to sign with another key. */
  readonly signWith?: ReadonlyMap<number, SigningKey>;
}

const SIGNED = new Set(["open", "outcome", "decision", "close", "checkpoint"]);

/**
 * Re-seal edited Lines as an emitter holding the key would: chain them, sign the signed
 * types (and any Line that carries a `signature`), and give each `open` its key. For
 * building record files that are wrong in exactly one way while everything else about
 * them is valid: test vectors, and tests of a verifier. Never for a live record: use
 * `RecordWriter`, which also keeps `seq` and refuses what it must.
 */
export function resealLines(lines: readonly LooseLine[], options: ResealOptions): string {
  let tail: string | undefined;
  let out = "";
  for (const [index, original] of lines.entries()) {
    const key = options.signWith?.get(index) ?? options.key;
    const line: LooseLine = { ...original };
    const unsigned = options.unsigned?.includes(index) === true;
    if (unsigned) {
      delete line["signature"];
      delete line["key_id"];
    }
    const type = line["line_type"];
    if (options.chain !== false) {
      if (type === "open") {
        line["prev_hash"] = PrevHash.GENESIS;
        if (tail !== undefined) line["prev_session_tail"] = tail;
      } else if (tail !== undefined) {
        line["prev_hash"] = tail;
      }
    }
    const sign = !unsigned && ((typeof type === "string" && SIGNED.has(type)) || "signature" in line);
    if (type === "open" && sign) line["public_key"] = Buffer.from(key.publicKey).toString("hex");
    const sealed = sealLine(line, sign ? key : undefined);
    out += `${sealed.text}\n`;
    tail = sealed.lineHash;
  }
  return out;
}
