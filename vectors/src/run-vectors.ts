import { messageOf } from "@aegis/format/internal";
import { readManifest } from "./manifest.js";
import { runVector, type VectorResult } from "./run.js";
import { VectorsError, type VectorsFault } from "./vectors-error.js";

/**
 * `aegis vectors`: every vector of the manifest in `dir`, answered and compared in manifest
 * order (SPEC §11.4). A vector whose input cannot be read fails, its `actual` the error in the
 * words `describe` gives its fault, and the others still run; a manifest that cannot be read
 * is the refusal, and no vector runs.
 */
export async function runVectors(
  dir: string,
  describe: (fault: VectorsFault) => string,
): Promise<{ readonly ok: true; readonly results: readonly VectorResult[] } | { readonly ok: false; readonly fault: VectorsFault }> {
  let manifest;
  try {
    manifest = await readManifest(dir);
  } catch (error) {
    if (error instanceof VectorsError) return { ok: false, fault: error.fault };
    throw error;
  }
  const results: VectorResult[] = [];
  for (const vector of manifest.vectors) {
    try {
      results.push(await runVector(dir, vector));
    } catch (error) {
      const text = error instanceof VectorsError ? describe(error.fault) : messageOf(error);
      results.push({ id: vector.id, passed: false, expected: vector.expected, actual: { error: text } });
    }
  }
  return { ok: true, results };
}
