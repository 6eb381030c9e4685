import type { Catalog, Location } from "./catalog.js";
import { CatalogSource, type DiskUsage } from "./catalog-source.js";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { io } from "./errors.js";
import { segmentFileName, segmentNumberOf } from "./layout.js";
import type { EnvelopeDamage } from "./damage.js";
import { loadDirectory } from "./directory.js";
import { SegmentFiles } from "./segment-files.js";
import { directoryFiles } from "./store.js";

/**
 * A store directory opened for reading only (SPEC §14.1): no lock is taken, nothing is
 * written, a torn tail is skipped rather than cut. It answers from the store as it was when
 * opened, except that a digest it does not hold is looked for again if the store has grown
 * since (a live writer's later puts are not reported missing).
 */
export class DirectorySource extends CatalogSource {
  private constructor(
    path: string,
    catalog: Catalog,
    private readonly files: SegmentFiles,
    damage: readonly EnvelopeDamage[],
    private extent: Extent,
  ) {
    super(path, catalog, damage);
  }

  static async open(dir: string): Promise<DirectorySource> {
    const extent = await extentOf(dir);
    const loaded = await loadDirectory(dir, false);
    return new DirectorySource(dir, loaded.catalog, new SegmentFiles(dir), loaded.damage, extent);
  }

  protected readValue(location: Location): Promise<Uint8Array> {
    return this.files.readValue(location);
  }

  /** Reload the catalog if files were added or the last segment grew; whether it did. */
  protected override async reload(): Promise<boolean> {
    const now = await extentOf(this.path);
    if (now.segments === this.extent.segments && now.lastSize === this.extent.lastSize) return false;
    this.catalog = (await loadDirectory(this.path, false)).catalog;
    this.extent = now;
    return true;
  }

  protected diskUsage(): Promise<DiskUsage> {
    return directoryFiles(this.path);
  }

  protected release(): Promise<void> {
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
