import { readJsonFile, type ExitCode } from "@aegis/format/internal";
import { join } from "node:path";
import { VectorsError } from "./vectors-error.js";

/**
 * `vectors/manifest.json` (SPEC §11): every vector with its kind, the SPEC sections it
 * exercises, its input files (relative to the vectors directory) and its expected result.
 * A third party reads this file; its shape is part of what we publish.
 */
export const MANIFEST_SCHEMA = "aegis.vectors/1";

interface VectorHeader {
  readonly id: string;
  readonly description: string;
  /** SPEC sections, e.g. "8.3". */
  readonly spec: readonly string[];
  /** `positive` or `negative` first, then topic flags. */
  readonly flags: readonly string[];
}

export interface ChainExpected {
  readonly verdict: "verified" | "tampered" | "indeterminate";
  readonly reason: Readonly<Record<string, unknown>> | null;
  readonly text: string;
  readonly coverage: { readonly session_index: number; readonly seq: number } | null;
  readonly key_ids: readonly string[];
  readonly trust_label: "pinned" | "unpinned";
  readonly lines: number;
  readonly sessions: number;
  readonly head: string | null;
  /** SPEC §13.4: the calls ended Sessions left with no outcome, the first 100 listed. */
  readonly unfinished_calls: { readonly count: number; readonly calls: readonly { readonly session_index: number; readonly call_id: string }[] };
  readonly exit_code: ExitCode;
}

export type CanonicalExpected =
  | { readonly result: "canonical"; readonly canonical: string; readonly sha256: string }
  | { readonly result: "out_of_space"; readonly fault: { readonly code: string; readonly path: string } }
  | { readonly result: "not_json" };

export type Vector =
  | (VectorHeader & { readonly kind: "canonical"; readonly input: { readonly row: string }; readonly expected: CanonicalExpected })
  | (VectorHeader & {
      readonly kind: "ed25519";
      readonly input: { readonly case: string };
      readonly expected: { readonly valid: boolean };
    })
  | (VectorHeader & {
      readonly kind: "chain";
      readonly input: { readonly record: string; readonly trust: readonly string[] | null };
      readonly expected: ChainExpected;
    })
  | (VectorHeader & {
      readonly kind: "envelope";
      /** `expire_before`: a store to expire first (a copy of it), as SPEC §14.12 says, under `record` alone. */
      readonly input: { readonly record: string; readonly envelope: string; readonly expire_before?: string };
      readonly expected: EnvelopeExpected;
    })
  | (VectorHeader & {
      readonly kind: "policy";
      readonly input: { readonly policy: string; readonly decisions: readonly DecisionInput[] };
      readonly expected: PolicyExpected;
    })
  | (VectorHeader & {
      readonly kind: "recheck";
      readonly input: { readonly record: string; readonly policy: string; readonly envelope: string | null };
      readonly expected: RecheckExpected;
    })
  | (VectorHeader & {
      readonly kind: "proof";
      readonly input: {
        readonly proof: string;
        /** Trusted log keys, 64 hex. */
        readonly keys: readonly string[];
        /** Witness keys in the vkey form. */
        readonly witnesses: readonly string[];
        readonly min_witnesses: number;
      };
      readonly expected: ProofExpected;
    })
  | (VectorHeader & {
      readonly kind: "checkpointed";
      readonly input: {
        readonly record: string;
        readonly checkpoints: readonly string[];
        readonly trust: readonly string[] | null;
        /** Witness keys in the vkey form whose cosignatures count (SPEC §19.4); absent: none given. */
        readonly witnesses?: readonly string[];
        /** How many distinct given witnesses must have cosigned each checkpoint; absent: 0. */
        readonly min_witnesses?: number;
      };
      readonly expected: CheckpointedExpected;
    })
  | (VectorHeader & {
      readonly kind: "relay";
      readonly input: { readonly transcript: string; readonly policy: string | null; readonly bindings: string | null };
      readonly expected: RelayExpected;
    });

export type VectorKind = Vector["kind"];

export interface EnvelopeExpected {
  /** Every digest the record names, in file order, and what the Envelope answers for it. */
  readonly digests: readonly {
    readonly digest: string;
    readonly status: "present" | "missing" | "digest_mismatch" | "redacted";
    /** A tombstone's reason (SPEC §14.8; `retention` for expiry, §14.12); only for `redacted`. */
    readonly reason?: string;
  }[];
  /** The codes of the damage found opening the Envelope (SPEC §14.7), in order. */
  readonly damage: readonly string[];
  /** `aegis envelope verify`: 1 any mismatch, else 2 any damage that may have cost entries, else 0. */
  readonly exit_code: ExitCode;
}

/** One call to decide: its tool, the axes its caller asserts, and the request bytes as UTF-8 text. */
export interface DecisionInput {
  readonly tool_id: string;
  readonly axes?: Readonly<Record<string, unknown>>;
  readonly request?: string;
}

export type PolicyExpected =
  | {
      readonly result: "valid";
      readonly policy_set_hash: string;
      readonly needs_envelope: boolean;
      /** Per input decision, in order: the verdict and the rule that decided (null: the default). */
      readonly decisions: readonly { readonly verdict: string; readonly rule: string | null }[];
    }
  | { readonly result: "invalid"; readonly problems: readonly { readonly code: string; readonly path: string | null }[] };

export interface RecheckExpected {
  /** The report lines (SPEC §16.4), in file order. */
  readonly lines: readonly string[];
  /** Per line, an indeterminate verdict's reason as `aegis recheck --json` gives it (SPEC §16.3, §16.5), else null. */
  readonly reasons: readonly (Readonly<Record<string, unknown>> | null)[];
  readonly exit_code: ExitCode;
}

/**
 * One event of a relay transcript (SPEC §17): a frame from either side (as UTF-8 text, or as
 * hex when it is not UTF-8), a human's answer to a park, the record failing, or the end.
 */
type RelayEvent =
  | { readonly client: string }
  | { readonly client_hex: string }
  | { readonly server: string }
  | { readonly server_hex: string }
  | { readonly approve: string }
  | { readonly deny: string; readonly reason: string }
  | { readonly record_fails: true }
  | { readonly end: "child_exited" | "grace_expired" | "transport_closed" }
  | { readonly end: "signalled"; readonly signal: string };

export interface RelayTranscript {
  readonly role: string | null;
  readonly session: string | null;
  /** How a refused call is answered (SPEC §17.3); absent: `tool-result`. */
  readonly refusal?: "tool-result" | "reference";
  readonly events: readonly RelayEvent[];
}

export interface RelayExpected {
  /**
   * Per client frame, in order: what the relay does with it, and the frame it writes back
   * in its place when it answers (UTF-8). Per server frame: whether it reaches the client.
   * Per answer to a park: whether it was taken.
   */
  readonly steps: readonly (
    | { readonly event: number; readonly verdict: "forward" | "answer" | "drop" | "failed"; readonly answer: string | null }
    | { readonly event: number; readonly relayed: boolean }
    | { readonly event: number; readonly taken: boolean; readonly refusal: string | null }
  )[];
  /**
   * Every Line of the Session in order, without `prev_hash`, `key_id`, `signature`,
   * `public_key`, `wall_ms` and `time` (which depend on the key and the clock).
   */
  readonly lines: readonly Readonly<Record<string, unknown>>[];
}

/** SPEC §19.3: what checking one proof offline answers. */
export interface ProofExpected {
  /** `included`, or why not: a `ProofCheck` code, `checkpoint_refused:<opening code>`, or `too_few_witnesses`. */
  readonly result: string;
  /** For an included Line: its index, the tree size, and whether the Line carried a signature that checked. */
  readonly index: number | null;
  readonly size: number | null;
  readonly line_signature: "signed" | "unsigned" | null;
  /** The names of the given witnesses whose cosignatures checked. */
  readonly cosigned: readonly string[];
}

/** SPEC §19.4: the verifier's answer with checkpoints, and what was found of each. */
export interface CheckpointedExpected extends ChainExpected {
  readonly findings: readonly string[];
  readonly anchored: { readonly size: number; readonly in_flight: readonly string[] } | null;
  /** With witness keys given: per checkpoint, in the order given, the witnesses that cosigned it (SPEC §19.3 names). */
  readonly cosigned?: readonly (readonly string[])[];
}

export interface Manifest {
  readonly schema: typeof MANIFEST_SCHEMA;
  readonly vectors: readonly Vector[];
}

const KINDS: ReadonlySet<string> = new Set<VectorKind>(["canonical", "ed25519", "chain", "envelope", "policy", "recheck", "relay", "proof", "checkpointed"]);

/** A manifest is a list of file names and answers: 64 MiB is far above any (SPEC §18). */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

/** Read and shape-check a manifest; a file that is not one is a usage-level fault (exit 2). */
export async function readManifest(dir: string): Promise<Manifest> {
  const path = join(dir, "manifest.json");
  const read = await readJsonFile(path, MAX_MANIFEST_BYTES);
  if (!read.ok) throw new VectorsError({ code: "bad_vectors", path, detail: read.detail });
  const parsed = read.value;
  const problem = manifestProblem(parsed);
  if (problem !== undefined) throw new VectorsError({ code: "bad_vectors", path, detail: problem });
  return parsed as Manifest;
}

function manifestProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "the manifest is not a JSON object";
  if (!("schema" in value) || value.schema !== MANIFEST_SCHEMA) return `"schema" is not "${MANIFEST_SCHEMA}"`;
  if (!("vectors" in value) || !Array.isArray(value.vectors)) return `"vectors" is not an array`;
  const seen = new Set<string>();
  for (const [i, v] of (value.vectors as unknown[]).entries()) {
    if (typeof v !== "object" || v === null) return `vectors[${i}] is not an object`;
    const { id, kind, input, expected } = v as Record<string, unknown>;
    if (typeof id !== "string" || id === "") return `vectors[${i}].id is not a string`;
    if (seen.has(id)) return `vectors[${i}].id "${id}" repeats an earlier id`;
    seen.add(id);
    if (typeof kind !== "string" || !KINDS.has(kind)) return `vectors[${i}].kind is not one of ${[...KINDS].join(", ")}`;
    if (typeof input !== "object" || input === null) return `vectors[${i}].input is not an object`;
    if (typeof expected !== "object" || expected === null) return `vectors[${i}].expected is not an object`;
  }
  return undefined;
}
