/**
 * Why the oracle could not answer a vector: the manifest or a vector's file is not what SPEC
 * §11.4 describes, or an `expire_before` vector's record cannot be expired under (SPEC §14.12).
 * Each is a fault `aegis` has too, with the same members, so that it says it in its own words.
 */
export type VectorsFault =
  | { readonly code: "bad_vectors"; readonly path: string; readonly detail: string }
  | { readonly code: "unreadable_record"; readonly path: string; readonly detail: string }
  | { readonly code: "expiry_refused"; readonly path: string; readonly verdict: string };

/** A {@link VectorsFault}, thrown. */
export class VectorsError extends Error {
  /** Always `"VectorsError"`. */
  override readonly name = "VectorsError";
  constructor(
    /** Why the vector could not be answered. */
    readonly fault: VectorsFault,
  ) {
    super(fault.code === "expiry_refused" ? `${fault.path}: ${fault.verdict}` : `${fault.path}: ${fault.detail}`);
  }
}
