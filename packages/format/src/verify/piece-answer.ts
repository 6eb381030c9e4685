/**
 * What a row thread answers for a piece (row-work.ts), in a form the calling thread takes in
 * without building an object per row: numbers in typed arrays whose buffers are handed over,
 * the line hashes as one hex string (a row's hash is a slice of it), and the few strings the
 * walk reads, each once a piece. Taking in structured-cloned objects per row was most of the
 * calling thread's work (ADR 0027); this answer is read row by row, as the walk goes
 * (piece-rows.ts), and nothing of it outlives its piece but the strings the walk keeps.
 */

/** The members of a Line the walk reads (walk.ts, signatureClaim); the rest stay on the worker. */
export const LINKED_MEMBERS = ["line_type", "seq", "prev_hash", "prev_session_tail", "public_key", "call_id", "approval_id", "signature", "key_id"] as const;

/** Where `prev_hash`, `signature` and `key_id` sit in LINKED_MEMBERS: their stand-ins are told by position. */
export const PREV_HASH_MEMBER = 2;
export const SIGNATURE_MEMBER = 7;
export const KEY_ID_MEMBER = 8;

/** How a row was read: the `KIND` of each. */
export const ROW_LINE = 0;
/** Parsed and hashed, but not an object. */
export const ROW_NOT_OBJECT = 1;
export const ROW_DOES_NOT_PARSE = 2;
export const ROW_OUTSIDE_VALUE_SPACE = 3;
/** Over the row bound (SPEC §13.1): not read. */
export const ROW_TOO_LONG = 4;

/** The numbers of a row in `rows`, at `STRIDE * i`. */
export const KIND = 0;
/** [START, END) of the row in the piece; for a row too long, its offset and, at END, its length. */
export const START = 1;
export const END = 2;
/** The signature's curve check under key `KEY`: 1 passed, 0 failed, -1 not made. */
export const CHECK = 3;
/** The index in `keys` of the key the worker took for the row's Session, -1 none. */
export const KEY = 4;
/** A fault's detail: an index in `strings`. */
export const DETAIL = 5;
/** Then one slot per member of LINKED_MEMBERS, in that order. */
export const MEMBERS = 6;
export const STRIDE = MEMBERS + LINKED_MEMBERS.length;

/**
 * A member slot. At least 0: a string (`strings[slot >> 1]`, slot even) or a number
 * (`numbers[slot >> 1]`, slot odd). Below 0, one of these. The walk asks of a member other
 * than `seq` only whether it is a string or a number, or present at all, so any other kind of
 * value travels as `null`.
 */
export const ABSENT = -1;
export const OTHER = -2;
/** `prev_hash` is the line hash of the row before it in the piece. */
export const LINKS_BACK = -3;
/** A `signature` the walk will find well formed (SPEC §4: 128 lowercase hex), checked on the worker. */
export const WELL_FORMED = -4;
/** A `key_id` that is the key id of the key `KEY`, as the worker computed it. */
export const KEYS_ID = -5;

/** Hex digits of a line hash in `hashes`, a row. */
export const HASH_CHARS = 64;

/** A piece's rows, in order. */
export interface PieceAnswer {
  /** STRIDE numbers a row. */
  readonly rows: Int32Array<ArrayBuffer>;
  readonly numbers: Float64Array<ArrayBuffer>;
  readonly strings: readonly string[];
  /** HASH_CHARS a row: the row's line hash, for a row of ROW_LINE or ROW_NOT_OBJECT. */
  readonly hashes: string;
  /** The public keys (hex) the signature checks were made under, indexed by `KEY`. */
  readonly keys: readonly string[];
  /**
   * Where the rows not read start in the piece: its length when every row was read. A thread
   * reads no more rows than its budget (row-work.ts), so that a piece of tiny rows cannot
   * make an answer many times its size; the rest is read on the calling thread, and only if
   * the walk gets there (ADR 0027, point 7).
   */
  readonly readTo: number;
  /** The public key (hex) of the Session the thread had reached at `readTo`: the hint to read the rest with. */
  readonly hintAt: string | undefined;
}

const NO_HASH = "0".repeat(HASH_CHARS);

/** Builds a PieceAnswer on the worker, a row at a time. */
export class AnswerWriter {
  private rows = new Int32Array(STRIDE * 256);
  private count = 0;
  private readonly numbers: number[] = [];
  private readonly strings: string[] = [];
  private readonly indexes = new Map<string, number>();
  private readonly hashes: string[] = [];

  /** Begin a row of `kind`; answers where its numbers start, to fill in with {@link set}. */
  row(kind: number, start: number, end: number, hash: string | undefined): number {
    const at = STRIDE * this.count;
    // Stryker disable next-line EqualityOperator: equivalent E23
    if (at + STRIDE > this.rows.length) {
      const grown = new Int32Array(2 * this.rows.length);
      grown.set(this.rows);
      this.rows = grown;
    }
    this.count++;
    this.rows.fill(ABSENT, at, at + STRIDE);
    this.rows[at + KIND] = kind;
    this.rows[at + START] = start;
    this.rows[at + END] = end;
    this.rows[at + CHECK] = -1;
    this.hashes.push(hash ?? NO_HASH);
    return at;
  }

  set(at: number, field: number, value: number): void {
    this.rows[at + field] = value;
  }

  /** The slot of a string, each distinct string sent once a piece. */
  string(text: string): number {
    let index = this.indexes.get(text);
    if (index === undefined) {
      index = this.strings.length;
      this.strings.push(text);
      this.indexes.set(text, index);
    }
    return index << 1;
  }

  /** The slot of a number. */
  number(value: number): number {
    this.numbers.push(value);
    return ((this.numbers.length - 1) << 1) | 1;
  }

  finish(keys: readonly string[], readTo: number, hintAt: string | undefined): PieceAnswer {
    return {
      rows: this.rows.slice(0, STRIDE * this.count),
      numbers: Float64Array.from(this.numbers),
      strings: this.strings,
      hashes: this.hashes.join(""),
      keys,
      readTo,
      hintAt,
    };
  }
}
