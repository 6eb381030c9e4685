import { errnoOf } from "@aegis/format/internal";
import { readInputFile, replaceFileDurably } from "@aegis/format/durable";
import { formatVerifierKey, type NoteVerifier } from "../keys.js";
import { consistencyRanges, TreeHasher } from "../merkle.js";
import { recordConsistencyProof } from "../record-tree.js";
import { pushCheckpoint, type PushResult } from "./push.js";

/**
 * A writer's checkpoints pushed to witnesses as they are made (SPEC §19.6, `aegis wrap
 * --checkpoints --witness`): in the background, never on a call's path. One push at a time
 * per witness; a checkpoint made while one is in flight waits, and only the latest is sent.
 * What each witness last cosigned is kept in a private file beside the record, replaced
 * durably after each cosignature, so a restarted writer resumes from the witness's size and
 * never pushes a tree smaller than one a witness cosigned.
 *
 * The consistency proof from a witness's size `m` is the frontier of the tree at `m` and
 * subtrees of the Lines after it (RFC 9162 §2.1.4): the leaf hashes of Lines from the oldest
 * size a witness holds are kept for it (at most {@link MAX_KEPT_LEAVES}); a proof from before
 * them is made by reading the record again.
 */

/** Leaf hashes kept for proofs (32 bytes each): past this, the oldest go, and the record is read instead. */
const MAX_KEPT_LEAVES = 1_000_000;

interface Target {
  readonly verifier: NoteVerifier;
  readonly url: string;
}

interface Pending {
  readonly note: string;
  readonly size: number;
}

export class Witnessing {
  private readonly sizes: Map<string, number>;
  /** The tree at `base.size`, and the leaf hashes after it. */
  private base: TreeHasher;
  private leaves: Buffer[] = [];
  private readonly busy = new Set<string>();
  private readonly waiting = new Map<string, Pending>();
  private readonly lines = new Map<string, string>();
  private readonly pushes = new Set<Promise<void>>();
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    private readonly targets: readonly Target[],
    private readonly record: string,
    private readonly stateFile: string,
    sizes: Map<string, number>,
    tree: TreeHasher,
    private readonly onResult: (result: PushResult) => void,
  ) {
    this.sizes = sizes;
    this.base = tree.snapshot();
  }

  /** Read what each witness last cosigned (`<record>.witnesses`), over the tree the record holds now. */
  static async open(targets: readonly Target[], record: string, tree: TreeHasher, onResult: (result: PushResult) => void): Promise<Witnessing> {
    const stateFile = `${record}.witnesses`;
    return new Witnessing(targets, record, stateFile, await readSizes(stateFile), tree, onResult);
  }

  /** A Line durable, in order: its leaf hash, kept for proofs. */
  leaf(hash: Buffer): void {
    this.leaves.push(hash);
    if (this.leaves.length > MAX_KEPT_LEAVES) this.advance(this.base.size + this.leaves.length);
  }

  /** A checkpoint made: push it to every witness, now or once its push in flight ends. */
  push(note: string, size: number): void {
    for (const target of this.targets) {
      const key = keyOf(target);
      if (this.busy.has(key)) {
        this.waiting.set(key, { note, size });
        continue;
      }
      this.start(target, { note, size });
    }
  }

  /** Wait for every push in flight, and those waiting behind them; then each witness's cosignature line of `size`. */
  async settle(size: number): Promise<string[]> {
    while (this.pushes.size > 0) await Promise.allSettled([...this.pushes]);
    await this.saving;
    return this.targets.flatMap((t) => {
      const line = this.lines.get(`${keyOf(t)} ${size}`);
      return line === undefined ? [] : [line];
    });
  }

  private start(target: Target, pending: Pending): void {
    const key = keyOf(target);
    this.busy.add(key);
    const run = (async () => {
      const result = await pushCheckpoint(pending.note, target, (old) => this.proof(old, pending.size), this.sizes.get(key) ?? 0).catch(
        (error: unknown): PushResult => ({ ...target, code: "fault", detail: error instanceof Error ? error.message : String(error) }),
      );
      if (result.code === "cosigned") {
        this.lines.set(`${key} ${result.size}`, result.line);
        this.sizes.set(key, result.size);
        this.save();
        this.trim();
      }
      this.onResult(result);
    })();
    this.pushes.add(run);
    void run.finally(() => {
      this.pushes.delete(run);
      this.busy.delete(key);
      const next = this.waiting.get(key);
      this.waiting.delete(key);
      if (next !== undefined) this.start(target, next);
    });
  }

  /** The consistency proof from `old` to `size`: from what is kept when it can be, else from the record. */
  private async proof(old: number, size: number): Promise<readonly Buffer[]> {
    const from = this.base.size;
    if (old < from || size > from + this.leaves.length) return recordConsistencyProof(this.record, old, size);
    const atOld = this.base.snapshot();
    for (const leaf of this.leaves.slice(0, old - from)) atOld.add(leaf);
    const frontier = atOld.frontier();
    return consistencyRanges(old, size).map((range) => {
      const known = frontier.find((f) => f.start === range.start && f.end === range.end);
      if (known !== undefined) return known.hash;
      const tree = new TreeHasher();
      for (const leaf of this.leaves.slice(range.start - from, range.end - from)) tree.add(leaf);
      return tree.root();
    });
  }

  /** Drop the leaves no witness's proof needs: those before the smallest size a witness holds. */
  private trim(): void {
    const held = this.targets.map((t) => this.sizes.get(keyOf(t)) ?? 0);
    const least = Math.min(...held);
    if (least > this.base.size) this.advance(Math.min(least, this.base.size + this.leaves.length));
  }

  private advance(to: number): void {
    const count = to - this.base.size;
    for (const leaf of this.leaves.slice(0, count)) this.base.add(leaf);
    this.leaves = this.leaves.slice(count);
  }

  /** Keep the sizes on disk, one write after another, each whole (a crash leaves the old or the new). */
  private save(): void {
    const sizes = Object.fromEntries([...this.sizes].sort(([a], [b]) => (a < b ? -1 : 1)));
    const bytes = Buffer.from(`${JSON.stringify({ schema: "aegis.witnessed/1", cosigned: sizes }, null, 1)}\n`);
    this.saving = this.saving.then(() => replaceFileDurably(this.stateFile, bytes)).catch(() => undefined);
  }
}

/** A witness is its key and URL: the same key at another URL is another place to push to. */
function keyOf(target: Target): string {
  return `${formatVerifierKey(target.verifier)}@${target.url}`;
}

async function readSizes(file: string): Promise<Map<string, number>> {
  let bytes: Buffer;
  try {
    bytes = await readInputFile(file, 1024 * 1024);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return new Map();
    throw error;
  }
  const sizes = new Map<string, number>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new Error(`${file} is not what this writer keeps there: not JSON`);
  }
  const cosigned = typeof parsed === "object" && parsed !== null && "cosigned" in parsed ? parsed.cosigned : undefined;
  if (typeof cosigned !== "object" || cosigned === null) throw new Error(`${file} is not what this writer keeps there: no cosigned sizes`);
  for (const [key, size] of Object.entries(cosigned)) if (typeof size === "number" && Number.isSafeInteger(size) && size >= 0) sizes.set(key, size);
  return sizes;
}
