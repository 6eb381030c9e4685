import { hash } from "node:crypto";

/**
 * One-shot SHA-256 as 64 lowercase hex, under Node: OpenSSL's, with no Hash object per call
 * (a verifier hashes every Line). Browser bundles put `sha256-noble.ts` in its place (adr/0015).
 */
export function sha256Hex(bytes: Uint8Array | string): string {
  return hash("sha256", bytes, "hex");
}
