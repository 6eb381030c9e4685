import type { EncodedBatch } from "@aegis/format/browser";

/** Which arithmetic a signature worker uses for SPEC §8.5 step 4 (the steps before it are shared). */
export type Backend = "webcrypto" | "noble";

/** Main thread to worker. */
export type WorkerRequest =
  | { readonly code: "batch"; readonly id: number; readonly batch: EncodedBatch }
  | { readonly code: "hello"; readonly backend: Backend | "auto" }
  /** Rows of the record from byte `base` on, whole rows only: their LineHashes, ahead of the walk. */
  | { readonly code: "hash"; readonly id: number; readonly base: number; readonly bytes: Uint8Array }
  /** One signature, any bytes: how the tests hold each back end to the Ed25519 vectors. */
  | { readonly code: "check"; readonly id: number; readonly key: string; readonly message: Uint8Array; readonly signature: Uint8Array };

/** Worker to main thread. */
export type WorkerAnswer =
  | { readonly code: "ready"; readonly backend: Backend }
  | { readonly code: "checked"; readonly id: number; readonly failed: number }
  | { readonly code: "hashed"; readonly id: number; readonly offsets: Uint32Array; readonly lengths: Uint32Array; readonly hex: string }
  | { readonly code: "valid"; readonly id: number; readonly valid: boolean }
  | { readonly code: "failed"; readonly id: number; readonly message: string };
