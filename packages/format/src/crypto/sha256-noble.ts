import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** One-shot SHA-256 as 64 lowercase hex in plain JavaScript, for browser bundles (adr/0015). */
export function sha256Hex(bytes: Uint8Array | string): string {
  return bytesToHex(sha256(typeof bytes === "string" ? utf8ToBytes(bytes) : bytes));
}
