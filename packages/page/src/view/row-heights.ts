/**
 * The heights of a virtual table's rows, each measured once it has been shown (a row whose
 * cells wrap is taller than one line), as a Fenwick tree over the row positions: a row's top,
 * and the row at a given offset, in O(log n) for a record of a million rows.
 */
export class RowHeights {
  private readonly tree: Float64Array;
  readonly count: number;

  /** `heights[position]`: each row's height so far (taken, not copied). */
  constructor(private readonly heights: Float64Array) {
    this.count = heights.length;
    // Node i covers the (i & -i) rows ending at row i; built in one pass, each node adding itself to its parent.
    this.tree = new Float64Array(this.count + 1);
    for (let i = 1; i <= this.count; i++) {
      this.tree[i] = (this.tree[i] ?? 0) + (heights[i - 1] ?? 0);
      const parent = i + (i & -i);
      if (parent <= this.count) this.tree[parent] = (this.tree[parent] ?? 0) + (this.tree[i] ?? 0);
    }
  }

  height(position: number): number {
    return this.heights[position] ?? 0;
  }

  /** Record a row's measured height; whether it changed. */
  set(position: number, height: number): boolean {
    const old = this.heights[position];
    if (old === undefined || old === height) return false;
    this.heights[position] = height;
    for (let i = position + 1; i <= this.count; i += i & -i) this.tree[i] = (this.tree[i] ?? 0) + height - old;
    return true;
  }

  /** The offset of the top of the row at `position` (the sum of the heights before it). */
  top(position: number): number {
    let sum = 0;
    for (let i = Math.min(position, this.count); i > 0; i -= i & -i) sum += this.tree[i] ?? 0;
    return sum;
  }

  total(): number {
    return this.top(this.count);
  }

  /** The position of the row that covers `offset` (the last row, past the end). */
  at(offset: number): number {
    let position = 0;
    let left = offset;
    for (let step = 2 ** Math.floor(Math.log2(Math.max(this.count, 1))); step > 0; step >>= 1) {
      const next = position + step;
      const size = this.tree[next];
      if (next <= this.count && size !== undefined && size <= left) {
        position = next;
        left -= size;
      }
    }
    return Math.min(position, Math.max(this.count - 1, 0));
  }
}
