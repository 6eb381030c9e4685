import { FaultError } from "@aegis/format";

/**
 * Why the oracle could not answer a vector: the manifest or a vector's file is not what SPEC
 * §11.4 describes, or an `expire_before` vector's record cannot be expired under (SPEC §14.12).
 * Each is a fault `aegis` has too, with the same members, so that it says it in its own words.
 */
export type VectorsFault =
  | { readonly code: "bad_vectors"; readonly path: string; readonly detail: string }
  | { readonly code: "unreadable_record"; readonly path: string; readonly detail: string }
  | { readonly code: "expiry_refused"; readonly path: string; readonly verdict: string };

/** A `VectorsFault`, thrown. */
export class VectorsError extends FaultError<VectorsFault> {
  constructor(fault: VectorsFault) {
    super("VectorsError", fault, describeVectorsFault);
  }
}

/** The words of a `VectorsFault`, after its path; `aegis` words the same fault its own way. */
function describeVectorsFault(fault: VectorsFault): string {
  return fault.code === "expiry_refused" ? `${fault.path}: ${fault.verdict}` : `${fault.path}: ${fault.detail}`;
}
