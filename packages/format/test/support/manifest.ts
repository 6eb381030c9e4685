import { readVectorJson } from "./vectors.js";

/** The entries of `vectors/manifest.json` this package's tests read (the vector oracle, `vectors/src/manifest.ts`, owns the full schema). */
export interface ManifestEntry {
  readonly id: string;
  readonly kind: string;
  readonly flags: readonly string[];
  readonly input: Readonly<Record<string, unknown>>;
  readonly expected: Readonly<Record<string, unknown>>;
}

export function manifestEntries(kind: string): ManifestEntry[] {
  return readVectorJson<{ vectors: ManifestEntry[] }>("manifest.json").vectors.filter((v) => v.kind === kind);
}
