import type { EnvelopeSink } from "../envelope-boundary.js";
import type { LineHash } from "../wire/digest.js";
import type { SigningKey } from "../crypto/keys.js";

/** How {@link RecordWriter.open} opens a record file. */
export interface RecordWriterOptions {
  /** The key the Session is signed with; its public key goes into the `open` Line (SPEC §8.4). */
  readonly key: SigningKey;
  /**
   * Permit the published development key. Only for reproducing vectors: a record signed
   * with it proves nothing about who wrote it.
   */
  readonly allowInsecureDevKey?: boolean;
  /**
   * Where the verbatim request and response bytes of calls begun with bytes are kept
   * (SPEC §9): each is put, durably, before the Line that names its digest is written.
   */
  readonly envelope?: EnvelopeSink;
  /**
   * Told of every Line as it is appended, in file order, with its canonical text (no
   * newline) and whether it became durable: what a Merkle tree over the record is fed
   * (`@aegis/proof`'s checkpointing writer). Called inside the append step; keep it cheap.
   */
  readonly onLine?: (line: AppendedLine) => void;
  /**
   * The clock each Line's `time` member is read from (SPEC §13.7, an aegis-ts extension):
   * by default the system's. `false` writes no `time`, as the reference's writer: for
   * records that must be the same bytes on every run (test vectors).
   */
  readonly clock?: (() => Date) | false;
  /**
   * aegis-ts (SPEC §17.11): what the Session's server was granted by `aegis wrap --confine`,
   * and how it was held; signed in the Session's `open`, so a stranger verifying the record
   * learns it.
   */
  readonly confinement?: {
    /** `bubblewrap`, or `none` when `best_effort` started the server with nothing enforced. */
    readonly mechanism: "bubblewrap" | "none";
    /** The mechanism's version as it reports it; empty for `none`. */
    readonly version: string;
    /** Absolute paths the server may read (those it may write included). */
    readonly read: readonly string[];
    /** Absolute paths the server may write. */
    readonly write: readonly string[];
    /** `HOST:PORT` destinations the server may connect to; none reaches anything else. */
    readonly net: readonly string[];
    /** Whether the paths a dynamically linked program needs to start were granted (`--allow-exec-support`). */
    readonly exec_support: boolean;
    /** Whether the server was started with what could be enforced, when not all could. */
    readonly best_effort: boolean;
    /** What was granted but not enforced: `read`, `write`, `net`; empty when all was. */
    readonly not_enforced: readonly ("read" | "write" | "net")[];
  };
}

/** A Line as {@link RecordWriterOptions.onLine} is told of it. */
export interface AppendedLine {
  /** The Line's canonical text, as written, without its newline. */
  readonly text: string;
  /** Its `seq` in its Session. */
  readonly seq: number;
  /** Its `line_hash`: the SHA-256 of `text`. */
  readonly lineHash: LineHash;
  /** Resolves true once the Line is on disk, false if its write failed; never rejects. */
  readonly durable: Promise<boolean>;
}
