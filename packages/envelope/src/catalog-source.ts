import { checkDigest, readThrough, type Catalog, type Location } from "./catalog.js";
import type { EnvelopeDamage } from "./damage.js";
import { EnvelopeError } from "./errors.js";
import type { EntryDigest, EnvelopeEntry, EnvelopeRead, EnvelopeSource, EnvelopeStats } from "./source.js";

/** The files an Envelope consists of on disk, and their total size. */
export interface DiskUsage {
  readonly files: number;
  readonly diskBytes: number;
}

/**
 * An Envelope opened for reading only, answered from its catalog (SPEC §14.1): a store
 * directory and a pack alike. What differs is where a value's bytes are read from, what the
 * files on disk are, and whether the catalog can be read again because a live writer added
 * to it; everything else is one code path, so the two cannot answer differently.
 */
export abstract class CatalogSource implements EnvelopeSource {
  private closed = false;

  protected constructor(
    readonly path: string,
    protected catalog: Catalog,
    readonly damage: readonly EnvelopeDamage[],
  ) {}

  async get<D extends EntryDigest>(digest: D): Promise<EnvelopeRead<D>> {
    if (this.closed) throw new EnvelopeError({ code: "closed" });
    const read = await readThrough(this.catalog, digest, (location) => this.readValue(location));
    // A digest not held may have been put since the catalog was read: look once more.
    if (read.code !== "missing" || !(await this.reload())) return read;
    return readThrough(this.catalog, digest, (location) => this.readValue(location));
  }

  async entry(digest: EntryDigest): Promise<EnvelopeEntry | undefined> {
    checkDigest(digest);
    return this.catalog.entry(digest);
  }

  async *entries(): AsyncGenerator<EnvelopeEntry> {
    yield* this.catalog.list();
  }

  async stats(): Promise<EnvelopeStats> {
    return { ...this.catalog.counts(), ...(await this.diskUsage()) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.release();
  }

  /** The bytes at `location`, fewer when the file ends inside the value. */
  protected abstract readValue(location: Location): Promise<Uint8Array>;
  protected abstract diskUsage(): Promise<DiskUsage>;
  /** Let go of the files held open. */
  protected abstract release(): Promise<void>;

  /** Read the catalog again if the Envelope has grown since; whether it had. A pack never grows. */
  protected reload(): Promise<boolean> {
    return Promise.resolve(false);
  }
}
