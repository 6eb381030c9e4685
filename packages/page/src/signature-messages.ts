import type { EncodedBatch, PieceAnswer } from "@aegis/format/browser";

/** Which arithmetic a signature worker uses for SPEC §8.5 step 4 (the steps before it are shared). */
export type Backend = "webcrypto" | "noble";

/** Main thread to worker. */
export type WorkerRequest =
  | { readonly code: "batch"; readonly id: number; readonly batch: EncodedBatch }
  | { readonly code: "hello"; readonly backend: Backend | "auto" }
  /**
   * Whole rows of the record (handed over): read each, check its signature under the key of
   * the Session it seems to be in (`hint`: the last `open`'s key before the piece, a guess).
   */
  | {
      readonly code: "piece";
      readonly id: number;
      readonly bytes: ArrayBuffer;
      readonly length: number;
      readonly limit: number;
      readonly hint: string | undefined;
      /** Rows to read at most: the rest of the piece is the main thread's. */
      readonly budget: number;
    }
  /** One signature, any bytes: how the tests hold each back end to the Ed25519 vectors. */
  | { readonly code: "check"; readonly id: number; readonly key: string; readonly message: Uint8Array; readonly signature: Uint8Array };

/** Worker to main thread. */
export type WorkerAnswer =
  | { readonly code: "ready"; readonly backend: Backend }
  | { readonly code: "checked"; readonly id: number; readonly failed: number }
  /** A piece's rows, read, and the buffer it came in, handed back for the next piece. */
  | { readonly code: "read"; readonly id: number; readonly answer: PieceAnswer; readonly bytes: ArrayBuffer }
  | { readonly code: "valid"; readonly id: number; readonly valid: boolean }
  | { readonly code: "failed"; readonly id: number; readonly message: string };
