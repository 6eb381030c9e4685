/**
 * What `aegis report` puts in a page beside the record's bytes (which the page verifies
 * itself): facts the browser cannot compute from the record alone, each computed here,
 * when the page is written, and labelled so on the page. The page's own script reads this
 * shape, through `@aegis/cli/browser`: a type-only import keeps the two in step.
 */

/** The document in the page's `aegis-data` script element. */
export interface ReportData {
  readonly schema: "aegis.report/1";
  /** The version of aegis that wrote the page (its verifier is bundled in it). */
  readonly version: string;
  /** When the page was written, RFC 3339. */
  readonly written_at: string;
  /** The record's file name (no directory), or null on the drop page. */
  readonly record_name: string | null;
  /** Trusted public keys given with `--key` (64 hex each); empty: unpinned. */
  readonly keys: readonly string[];
  /** With `--policy`: the recheck of every recorded call. */
  readonly recheck: RecheckData | null;
  /** With `--envelope`: what the Envelope holds for each call's request and response. */
  readonly envelope: EnvelopeData | null;
  /** With `--checkpoint`: what holding the record to each checkpoint found. */
  readonly checkpoints: CheckpointData | null;
}

export interface RecheckData {
  /** The policy file's name, and its `policy_set_hash`. */
  readonly policy: string;
  readonly policy_set_hash: string;
  /** One per recorded outcome, by the row it is on. */
  readonly calls: readonly RecheckedCall[];
}

/** The recheck verdict of the outcome on row `line`, as `aegis recheck` reports it. */
export interface RecheckedCall {
  readonly line: number;
  readonly code: "unchanged" | "newly_blocked" | "newly_allowed" | "newly_parked" | "indeterminate";
  /** The report line's clause (`unchanged allowed`, `indeterminate missing_envelope`). */
  readonly text: string;
  /** For an indeterminate verdict: why, in words. */
  readonly why: string | null;
  /** The rule that decides now (`null`: the set's default, or none selected). */
  readonly rule: string | null;
}

export interface EnvelopeData {
  /** The store or pack's name. */
  readonly source: string;
  /** Per digest the record names, what the Envelope held. */
  readonly digests: Readonly<Record<string, HeldEntry>>;
  /**
   * What `aegis envelope verify` counts for the record: every digest it names (each call's
   * request once, each tool definition the first time), by what the Envelope answered.
   */
  readonly tally: { readonly digests: number; readonly present: number; readonly missing: number; readonly digest_mismatch: number; readonly redacted: number };
  /** Damage found on opening it. */
  readonly damage: readonly string[];
}

/**
 * What an Envelope held for one digest: the bytes (base64) for a present entry, or null
 * when the page had no room left for them.
 */
export type HeldEntry =
  | { readonly status: "present"; readonly size: number; readonly base64: string | null }
  | { readonly status: "missing" }
  | { readonly status: "redacted"; readonly redacted_at: string; readonly reason: string }
  | { readonly status: "altered"; readonly found: string };

export interface CheckpointData {
  /** The verdict line `aegis verify --checkpoint` printed for the record with them. */
  readonly verdict: string;
  /** One line per checkpoint, as `aegis verify` prints it. */
  readonly findings: readonly string[];
}
