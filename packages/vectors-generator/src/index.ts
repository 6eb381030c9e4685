import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { MANIFEST_SCHEMA, type Manifest } from "@aegis/vectors/oracle";
import { canonicalVectors } from "./canonical.js";
import { chainVectors } from "./chains.js";
import { ed25519Vectors } from "./ed25519.js";
import { envelopeVectors } from "./envelope.js";
import { policyVectors } from "./policy.js";
import { proofVectors } from "./proofs.js";
import { recheckVectors } from "./recheck.js";
import { relayVectors } from "./relay.js";
import { VectorSet } from "./vector-set.js";

/** The directories the generator owns: everything in them is generated, nothing else is. */
export const GENERATED_DIRS = ["canonical", "ed25519", "chains", "envelope", "policies", "recheck", "relay", "proofs"] as const;

/**
 * Build every vector from `source` (the repository's `vectors/`, for the external data
 * some vectors are cut from). Deterministic: the same source gives the same bytes.
 */
export async function generateVectors(source: string): Promise<VectorSet> {
  const set = new VectorSet();
  await canonicalVectors(set);
  await ed25519Vectors(set, source);
  await chainVectors(set);
  await envelopeVectors(set);
  await policyVectors(set);
  await recheckVectors(set, source);
  await relayVectors(set);
  await proofVectors(set, source);
  const manifest: Manifest = { schema: MANIFEST_SCHEMA, vectors: set.vectors };
  set.file("manifest.json", `${JSON.stringify(manifest, null, 2)}\n`);
  return set;
}

export async function writeVectorSet(set: VectorSet, dir: string): Promise<void> {
  for (const [relative, bytes] of set.files) {
    const path = join(dir, relative);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }
}
