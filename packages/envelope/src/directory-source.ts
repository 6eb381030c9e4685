import { Catalog, checkDigest, readThrough } from "./catalog.js";
import { EnvelopeError } from "./errors.js";
import type { EnvelopeDamage } from "./damage.js";
import { loadDirectory } from "./directory.js";
import { SegmentFiles } from "./segment-files.js";
import type { EntryDigest, EnvelopeEntry, EnvelopeRead, EnvelopeSource, EnvelopeStats } from "./source.js";
import { directoryFiles } from "./store.js";

/**
 * A store directory opened for reading only (SPEC §14.1): no lock is taken, nothing is
 * written, a torn tail is skipped rather than cut. It sees the store as it was when opened:
 * puts a live writer makes later are not seen.
 */
export class DirectorySource implements EnvelopeSource {
  private constructor(
    readonly path: string,
    private readonly catalog: Catalog,
    private readonly files: SegmentFiles,
    readonly damage: readonly EnvelopeDamage[],
  ) {}

  static async open(dir: string): Promise<DirectorySource> {
    const loaded = await loadDirectory(dir, false);
    return new DirectorySource(dir, loaded.catalog, new SegmentFiles(dir), loaded.damage);
  }

  private closed = false;

  get<D extends EntryDigest>(digest: D): Promise<EnvelopeRead<D>> {
    if (this.closed) return Promise.reject(new EnvelopeError({ code: "closed" }));
    return readThrough(this.catalog, digest, (location) => this.files.readValue(location));
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
