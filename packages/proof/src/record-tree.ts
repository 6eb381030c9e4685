import { type LineHash, type Verification, type VerifyOptions, type WalkedLine, verifyRecord } from "@aegis/format";
import { consistencyRanges, inclusionRanges, leafHash, RangeHasher, TreeHasher } from "./merkle.js";

/**
 * The tree over a record: Line n (1-based, in file order, over every Session) is leaf n-1,
 * its data the Line's canonical form (SPEC §3), the bytes its `line_hash` hashes. The tree is
 * built while the verifier walks the file, so only Lines the walk accepted are leaves: a
 * record that breaks at Line k has a tree of k-1 leaves, whatever follows.
 */

/** The tree of a record's first Lines, and what the verifier said of the whole file. */
export interface RecordTree {
  /** The verifier's verdict on the whole file. */
  readonly verification: Verification;
  /** Lines the walk accepted: the tree's leaves available. */
  readonly lines: number;
  /** The size asked for (default every accepted Line), and its root. */
  readonly size: number;
  /** The RFC 6962 root of the first `size` Lines. */
  readonly root: Buffer;
  /** The tree of the first `size` Lines, to be extended Line by Line. */
  readonly tree: TreeHasher;
  /** The roots of the ranges asked for, in the order given. */
  readonly ranges: readonly Buffer[];
  /** The inclusion proof of each index asked for, in the tree of `size`. */
  readonly inclusions: ReadonlyMap<number, readonly Buffer[]>;
  /** The Lines `keep` chose, within the first `size`, with their leaf index and leaf data. */
  readonly kept: readonly { readonly index: number; readonly line: WalkedLine; readonly data: Buffer }[];
  /** The public key of the Session that holds Line `size`, as its `open` states it. */
  readonly sessionKey: string | undefined;
  /** The `line_hash` of the record's first Line: what names the record (see {@link defaultOrigin}). */
  readonly firstLineHash: LineHash | undefined;
}

/** What to compute while walking. */
export interface RecordTreeOptions extends Pick<VerifyOptions, "trust" | "onProgress"> {
  /** The tree's size; default every Line the walk accepted. */
  readonly size?: number;
  /** Subtrees whose roots to compute as well (for proofs). */
  readonly ranges?: readonly { readonly start: number; readonly end: number }[];
  /** Leaf indexes to prove: each gets its inclusion proof in the tree of `size` (which must be given). */
  readonly inclusions?: readonly number[];
  /** Which Lines to keep, with their leaf data, among the first `size`. */
  readonly keep?: (line: WalkedLine, index: number) => boolean;
}

/**
 * Walk the record at `path` with the verifier (SPEC §8) and hash its Lines into the tree.
 *
 * @throws RangeError when `size` is more than the Lines the walk accepted, or a range
 * reaches beyond them; the file system's error when the file cannot be read.
 */
export async function recordTree(path: string, options: RecordTreeOptions = {}): Promise<RecordTree> {
  const wanted = options.size;
  const tree = new TreeHasher();
  const ranges = new RangeHasher(options.ranges ?? []);
  if (options.inclusions !== undefined && wanted === undefined) throw new RangeError("inclusion proofs need the tree's size");
  const proofs = (options.inclusions ?? []).map((index) => ({ index, hasher: new RangeHasher(inclusionRanges(index, wanted ?? 0)) }));
  const kept: { index: number; line: WalkedLine; data: Buffer }[] = [];
  let lines = 0;
  let sessionKey: string | undefined;
  let keyAtSize: string | undefined;
  let firstLineHash: LineHash | undefined;
  const verification = await verifyRecord(
    { path },
    {
      ...(options.trust === undefined ? {} : { trust: options.trust }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      onLine: (line) => {
        lines += 1;
        if (lines === 1) firstLineHash = line.lineHash;
        if (line.lineType.token === "open" && typeof line.value["public_key"] === "string") sessionKey = line.value["public_key"];
        if (wanted !== undefined && lines > wanted && ranges.done) return;
        const data = line.canonical();
        const leaf = leafHash(data);
        if (wanted === undefined || lines <= wanted) {
          tree.add(leaf);
          if (lines === wanted) keyAtSize = sessionKey;
          if (options.keep?.(line, lines - 1) === true) kept.push({ index: lines - 1, line, data: Buffer.from(data) });
          for (const proof of proofs) if (!proof.hasher.done) proof.hasher.add(leaf);
        }
        if (!ranges.done) ranges.add(leaf);
      },
    },
  );
  const size = wanted ?? lines;
  if (size > lines) throw new RangeError(`the record has ${lines} Lines that verify; a tree of ${size} was asked for`);
  const inclusions = new Map(proofs.map((p) => [p.index, p.hasher.roots()]));
  return {
    verification,
    lines,
    size,
    root: tree.root(),
    tree,
    ranges: ranges.roots(),
    inclusions,
    kept,
    sessionKey: wanted === undefined ? sessionKey : keyAtSize,
    firstLineHash,
  };
}

/** The hashes of the inclusion proof of Line index `index` in the tree of `size` Lines. */
export async function recordInclusionProof(
  path: string,
  index: number,
  size: number,
  options: Pick<RecordTreeOptions, "trust"> = {},
): Promise<readonly Buffer[]> {
  return (await recordTree(path, { ...options, size, ranges: inclusionRanges(index, size) })).ranges;
}

/** The hashes proving the tree of `first` Lines a prefix of the tree of `second`. */
export async function recordConsistencyProof(
  path: string,
  first: number,
  second: number,
  options: Pick<RecordTreeOptions, "trust"> = {},
): Promise<readonly Buffer[]> {
  return (await recordTree(path, { ...options, size: second, ranges: consistencyRanges(first, second) })).ranges;
}

/**
 * The origin a record's checkpoints carry unless one is chosen: `aegis.invalid/record/` and
 * the `line_hash` of its first Line, which no later append can change. Two records never
 * share it, so two checkpoints of one origin are of one record, and must be consistent
 * (ADR 0013). `.invalid` never resolves: the name is an identity, not an address.
 */
export function defaultOrigin(firstLineHash: LineHash | undefined): string {
  return `aegis.invalid/record/${firstLineHash ?? "empty"}`;
}
