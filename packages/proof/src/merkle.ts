import { createHash } from "node:crypto";

/**
 * The Merkle tree of RFC 6962 §2.1 (RFC 9162 §2.1): leaf hash SHA-256(0x00 || data), node
 * hash SHA-256(0x01 || left || right), the root of n leaves split at the largest power of two
 * below n. Hashes are 32-byte Buffers throughout.
 */

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Buffer = createHash("sha256").digest();

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** The hash of a leaf whose data is `data` (a string is its UTF-8). */
export function leafHash(data: Uint8Array | string): Buffer {
  return createHash("sha256").update(LEAF_PREFIX).update(data).digest();
}

/** The hash of an interior node over two child hashes. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash("sha256").update(NODE_PREFIX).update(left).update(right).digest();
}

/**
 * The root of a tree fed one leaf hash at a time, in O(log n) memory: the roots of the
 * perfect subtrees so far, left to right, largest first (the binary digits of the count).
 */
export class TreeHasher {
  private readonly stack: { hash: Buffer; size: number }[] = [];
  private count = 0;

  /** The number of leaves added. */
  get size(): number {
    return this.count;
  }

  /** Add the next leaf, by its leaf hash. */
  add(leaf: Buffer): void {
    let node = { hash: leaf, size: 1 };
    for (let top = this.stack.at(-1); top !== undefined && top.size === node.size; top = this.stack.at(-1)) {
      this.stack.pop();
      node = { hash: nodeHash(top.hash, node.hash), size: top.size * 2 };
    }
    this.stack.push(node);
    this.count += 1;
  }

  /** A copy that goes on from here on its own: O(log n), no hashing. */
  snapshot(): TreeHasher {
    const copy = new TreeHasher();
    copy.stack.push(...this.stack.map((node) => ({ ...node })));
    copy.count = this.count;
    return copy;
  }

  /**
   * The perfect subtrees the leaves so far split into, largest first, with their roots: the
   * tree's frontier. A consistency proof from this size draws on these alone for the leaves
   * before it (RFC 9162 §2.1.4).
   */
  frontier(): { readonly start: number; readonly end: number; readonly hash: Buffer }[] {
    let start = 0;
    return this.stack.map((node) => {
      const range = { start, end: start + node.size, hash: node.hash };
      start += node.size;
      return range;
    });
  }

  /** The root of the leaves added so far; `EMPTY_ROOT` for none. */
  root(): Buffer {
    let root: Buffer | undefined;
    for (let i = this.stack.length - 1; i >= 0; i -= 1) {
      const node = this.stack[i];
      if (node === undefined) continue;
      root = root === undefined ? node.hash : nodeHash(node.hash, root);
    }
    return root ?? EMPTY_ROOT;
  }
}

/** Leaves `[start, end)`: a subtree whose root a proof carries. */
export interface LeafRange {
  /** The first leaf's index. */
  readonly start: number;
  /** One past the last leaf's index. */
  readonly end: number;
}

/** The largest power of two strictly below `n` (n > 1). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The subtrees whose roots make the inclusion proof of leaf `index` in a tree of `size`
 * leaves (RFC 9162 §2.1.3.1, PATH), in proof order: the leaf's sibling first, the root's
 * child last.
 */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  }
  const out: LeafRange[] = [];
  const path = (m: number, start: number, end: number): void => {
    const n = end - start;
    if (n <= 1) return;
    const k = split(n);
    if (m < k) {
      path(m, start, start + k);
      out.push({ start: start + k, end });
    } else {
      path(m - k, start + k, end);
      out.push({ start, end: start + k });
    }
  };
  path(index, 0, size);
  return out;
}

/**
 * The subtrees whose roots make the proof that the tree of `first` leaves is a prefix of
 * the tree of `second` (RFC 9162 §2.1.4.1, PROOF), in proof order. Empty when
 * `first` is 0 or equals `second`, where nothing needs proving.
 */
export function consistencyRanges(first: number, second: number): LeafRange[] {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) {
    throw new RangeError(`no consistency proof from a tree of ${first} to one of ${second}`);
  }
  const out: LeafRange[] = [];
  if (first === 0 || first === second) return out;
  const subproof = (m: number, start: number, end: number, whole: boolean): void => {
    const n = end - start;
    if (m === n) {
      if (!whole) out.push({ start, end });
      return;
    }
    const k = split(n);
    if (m <= k) {
      subproof(m, start, start + k, whole);
      out.push({ start: start + k, end });
    } else {
      subproof(m - k, start + k, end, false);
      out.push({ start, end: start + k });
    }
  };
  subproof(first, 0, second, true);
  return out;
}

/**
 * The roots of `ranges`, from one pass over the leaf hashes in order, in O(log n) memory
 * per range: fed leaf by leaf, as a verifier walks a record. Ranges must not overlap.
 */
export class RangeHasher {
  private readonly order: { readonly range: LeafRange; readonly at: number }[];
  private readonly found: Buffer[];
  private readonly last: number;
  private next = 0;
  private hasher: TreeHasher | undefined;
  private index = 0;

  constructor(ranges: readonly LeafRange[]) {
    this.order = ranges.map((range, at) => ({ range, at })).sort((a, b) => a.range.start - b.range.start);
    this.found = new Array<Buffer>(ranges.length);
    this.last = this.order.at(-1)?.range.end ?? 0;
  }

  /** True once every range is hashed: later leaves are not needed. */
  get done(): boolean {
    return this.next >= this.order.length;
  }

  /** The next leaf, by its leaf hash. */
  add(leaf: Buffer): void {
    const current = this.order[this.next];
    if (current !== undefined && this.index >= current.range.start) {
      this.hasher ??= new TreeHasher();
      this.hasher.add(leaf);
      if (this.index + 1 === current.range.end) {
        this.found[current.at] = this.hasher.root();
        this.hasher = undefined;
        this.next += 1;
      }
    }
    this.index += 1;
  }

  /**
   * The roots, in the order the ranges were given.
   *
   * @throws RangeError when fewer leaves were added than the ranges cover.
   */
  roots(): Buffer[] {
    if (!this.done) throw new RangeError(`the tree has ${this.index} leaves; the ranges need ${this.last}`);
    return [...this.found];
  }
}

/** {@link RangeHasher} over leaf hashes already at hand. */
export async function rangeRoots(leaves: AsyncIterable<Buffer> | Iterable<Buffer>, ranges: readonly LeafRange[]): Promise<Buffer[]> {
  const hasher = new RangeHasher(ranges);
  for await (const leaf of leaves) {
    if (hasher.done) break;
    hasher.add(leaf);
  }
  return hasher.roots();
}

/**
 * Whether `proof` shows the leaf hash `leaf` at `index` in the tree of `size` leaves whose
 * root is `root` (RFC 9162 §2.1.3.2).
 */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      if ((fn & 1n) === 0n) {
        while ((fn & 1n) === 0n && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && Buffer.from(r).equals(root);
}

/**
 * Whether `proof` shows the tree of `first` leaves with root `firstRoot` to be a prefix of
 * the tree of `second` leaves with root `secondRoot` (RFC 9162 §2.1.4.2).
 */
export function verifyConsistency(first: number, second: number, proof: readonly Uint8Array[], firstRoot: Uint8Array, secondRoot: Uint8Array): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && Buffer.from(firstRoot).equals(secondRoot);
  if (first === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const power = (BigInt(first) & (BigInt(first) - 1n)) === 0n;
  const path = power ? [firstRoot, ...proof] : [...proof];
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  const [head, ...rest] = path;
  if (head === undefined) return false;
  let fr: Uint8Array = head;
  let sr: Uint8Array = head;
  for (const c of rest) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && Buffer.from(fr).equals(firstRoot) && Buffer.from(sr).equals(secondRoot);
}
