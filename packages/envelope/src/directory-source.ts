import { Catalog, checkDigest, readThrough } from "./catalog.js";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { EnvelopeError, io } from "./errors.js";
import { segmentFileName, segmentNumberOf } from "./layout.js";
import type { EnvelopeDamage } from "./damage.js";
import { loadDirectory } from "./directory.js";
import { SegmentFiles } from "./segment-files.js";
import type { EntryDigest, EnvelopeEntry, EnvelopeRead, EnvelopeSource, EnvelopeStats } from "./source.js";
import { directoryFiles } from "./store.js";

/**
 * A store directory opened for reading only (SPEC §14.1): no lock is taken, nothing is
 * written, a torn tail is skipped rather than cut. It answers from the store as it was when
 * opened, except that a digest it does not hold is looked for again if the store has grown
 * since (a live writer's later puts are not reported missing).
 */
export class DirectorySource implements EnvelopeSource {
  private closed = false;

  private constructor(
    readonly path: string,
    private catalog: Catalog,
    private readonly files: SegmentFiles,
    readonly damage: readonly EnvelopeDamage[],
    private extent: Extent,
  ) {}

  static async open(dir: string): Promise<DirectorySource> {
    const extent = await extentOf(dir);
    const loaded = await loadDirectory(dir, false);
    return new DirectorySource(dir, loaded.catalog, new SegmentFiles(dir), loaded.damage, extent);
  }

  async get<D extends EntryDigest>(digest: D): Promise<EnvelopeRead<D>> {
    if (this.closed) throw new EnvelopeError({ code: "closed" });
    const read = await readThrough(this.catalog, digest, (location) => this.files.readValue(location));
    if (read.code !== "missing" || !(await this.grew())) return read;
    return readThrough(this.catalog, digest, (location) => this.files.readValue(location));
  }

  /** Reload the catalog if files were added or the last segment grew; whether it did. */
  private async grew(): Promise<boolean> {
    const now = await extentOf(this.path);
    if (now.segments === this.extent.segments && now.lastSize === this.extent.lastSize) return false;
    this.catalog = (await loadDirectory(this.path, false)).catalog;
    this.extent = now;
    return true;
  }

  async entry(digest: EntryDigest): Promise<EnvelopeEntry | undefined> {
    checkDigest(digest);
    return this.catalog.entry(digest);
  }

  async *entries(): AsyncGenerator<EnvelopeEntry> {
    yield* this.catalog.list();
  }

  async stats(): Promise<EnvelopeStats> {
    return { ...this.catalog.counts(), ...(await directoryFiles(this.path)) };
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.files.close();
    return Promise.resolve();
  }
}

/** How far the store reached: its segment count and the size of its last segment. */
interface Extent {
  readonly segments: number;
  readonly lastSize: number;
}

async function extentOf(dir: string): Promise<Extent> {
  const numbers = (await io(dir, () => readdir(dir))).map((n) => segmentNumberOf(n, ".seg")).filter((n): n is number => n !== undefined);
  const last = Math.max(0, ...numbers);
  const lastSize =
    last === 0
      ? 0
      : await stat(join(dir, segmentFileName(last))).then(
          (s) => s.size,
          () => -1,
        );
  return { segments: numbers.length, lastSize };
}
