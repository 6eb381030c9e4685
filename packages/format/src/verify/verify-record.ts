import { verifyChainBytes, verifyChainFile, verifyChainStream, type VerifyOptions } from "./verify.js";
import type { Verification } from "./verdict.js";

/**
 * Where a record to verify comes from: a file, bytes in memory, or a stream of its bytes (a
 * socket, an HTTP body, an object store). `name` is what a verdict calls a source without a
 * path.
 */
export type RecordSource =
  | { readonly path: string }
  | { readonly bytes: Uint8Array | string; readonly name?: string }
  | { readonly lines: AsyncIterable<Uint8Array>; readonly name: string };

/**
 * Verify a record in one streaming pass (SPEC §8), wherever it comes from. Memory does not grow
 * with the record: one chunk and one row are held at a time (bytes in memory are already held).
 * Deterministic: the same bytes give the same verdict, reason and position from every source.
 *
 * @example
 * ```ts
 * const { verdict } = await verifyRecord({ path: "session.aarl" }, { trust: [publicKeyHex] });
 * ```
 *
 * @throws RecordReadError when a file cannot be opened or read, or a stream fails.
 */
export async function verifyRecord(source: RecordSource, options: VerifyOptions = {}): Promise<Verification> {
  if ("path" in source) return verifyChainFile(source.path, options);
  if ("bytes" in source) return verifyChainBytes(source.bytes, options);
  return verifyChainStream(source.lines, source.name, options);
}
