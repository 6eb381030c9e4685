import { createHash } from "node:crypto";

/** SHA-256 over several parts, as raw bytes (digests of one string are `sha256Hex` of @aegis/format). */
export function sha256Of(...parts: readonly Uint8Array[]): Buffer {
  const h = createHash("sha256");
  for (const part of parts) h.update(part);
  return h.digest();
}
