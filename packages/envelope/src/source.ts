import type { EnvelopeRead as BoundaryRead, RequestDigest, ResponseDigest, ToolSpecDigest } from "@aegis/format";
import type { EnvelopeDamage } from "./damage.js";

/**
 * A digest an Envelope is asked for: the Chain's `request_digest` or `response_digest`
 * (SPEC §9), or an outcome's `tool_spec_digest` (SPEC §17.6).
 */
export type EntryDigest = RequestDigest | ResponseDigest | ToolSpecDigest;

/**
 * What reading a digest answers: format's `EnvelopeRead` (SPEC §9), which recheck reads too.
 * The bytes are re-hashed on every read: `present` means they hash to the digest asked for, now.
 */
export type EnvelopeRead<D extends EntryDigest = EntryDigest> = BoundaryRead<D>;

/**
 * One entry as the index knows it, without reading its bytes. `size` is the length of the
 * value (for a redacted entry: of the value that was removed). The digest is the SHA-256 of
 * the bytes, whichever side of a call they were: pass it to `get` as it is.
 */
export type EnvelopeEntry =
  | { readonly code: "present"; readonly digest: EntryDigest; readonly size: number }
  | {
      readonly code: "redacted";
      readonly digest: EntryDigest;
      readonly size: number;
      readonly redactedAt: string;
      readonly reason: string;
    };

/** Counts and sizes, from the index (nothing is re-hashed). */
export interface EnvelopeStats {
  /** Entries whose bytes are held. */
  readonly present: { readonly count: number; readonly bytes: number };
  /** Tombstones, and the size of the values they removed. */
  readonly redacted: { readonly count: number; readonly bytes: number };
  /** The files the store or pack consists of, and their total size on disk. */
  readonly files: number;
  /** The total size of those files, in bytes. */
  readonly diskBytes: number;
}

/**
 * What every Envelope offers a reader: a live store (opened read-only or for writing) and
 * a pack alike (SPEC §14.1). The other Envelope interfaces (the writer's sink, recheck's
 * lookup) are listed with it in `packages/format/src/envelope-boundary.ts`.
 */
export interface EnvelopeSource {
  /** Where it was opened from. */
  readonly path: string;
  /** Damage found while opening (SPEC §14.7); whole entries are served regardless. */
  readonly damage: readonly EnvelopeDamage[];
  /**
   * The bytes stored for `digest`, re-hashed now (SPEC §14.1, [M14.3]): `present` only when
   * they hash to it; otherwise `missing`, `digest_mismatch` or `redacted`.
   *
   * @throws EnvelopeError `bad_digest` when `digest` is not 64 lowercase hex, `closed`
   * after {@link EnvelopeSource.close}, `io`.
   */
  get<D extends EntryDigest>(digest: D): Promise<EnvelopeRead<D>>;
  /** What the index says of one digest, without reading its bytes; undefined when absent. */
  entry(digest: EntryDigest): Promise<EnvelopeEntry | undefined>;
  /** Every entry and tombstone, in the order they were written. */
  entries(): AsyncIterable<EnvelopeEntry>;
  /** Counts and sizes of entries, tombstones and files; no value is read. */
  stats(): Promise<EnvelopeStats>;
  /** Release the files it holds open; `get` is refused (`closed`) afterwards. */
  close(): Promise<void>;
}
