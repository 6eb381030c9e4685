import { checkHex, describeHexFault, sameHex, sha256Hex } from "@aegis/format/internal";
import { EnvelopeError } from "./errors.js";
import type { EntryDigest, EnvelopeEntry, EnvelopeRead } from "./source.js";

/** Where an entry's frame is: segment number (0 in a pack), frame offset, value length. */
export interface Location {
  readonly segment: number;
  readonly frame: number;
  readonly size: number;
}

export interface Tombstone {
  readonly redactedAt: string;
  readonly reason: string;
  readonly size: number;
}

/**
 * The in-memory index of a store or pack: one map entry per digest, nothing of the bytes.
 * This is all that opening keeps in memory (SPEC §14.4).
 */
export class Catalog {
  private readonly located = new Map<string, Location>();
  /** Further copies of a digest (only after a crash or a rebuilt index): redaction removes them all. */
  private readonly copies = new Map<string, Location[]>();
  private readonly tombstones = new Map<string, Tombstone>();
  private presentCount = 0;
  private presentBytes = 0;
  private redactedBytes = 0;

  /** Record an entry's frame; false when the digest already had one (the frame is a copy). */
  addEntry(digest: string, location: Location): boolean {
    if (this.located.has(digest)) {
      const more = this.copies.get(digest);
      if (more === undefined) this.copies.set(digest, [location]);
      else more.push(location);
      return false;
    }
    this.located.set(digest, location);
    if (!this.tombstones.has(digest)) {
      this.presentCount++;
      this.presentBytes += location.size;
    }
    return true;
  }

  /** Record a tombstone; the first one for a digest stands. */
  addTombstone(digest: string, tombstone: Tombstone): boolean {
    if (this.tombstones.has(digest)) return false;
    this.tombstones.set(digest, tombstone);
    this.redactedBytes += tombstone.size;
    const location = this.located.get(digest);
    if (location !== undefined) {
      this.presentCount--;
      this.presentBytes -= location.size;
    }
    return true;
  }

  has(digest: string): boolean {
    return this.located.has(digest);
  }

  location(digest: string): Location | undefined {
    return this.located.get(digest);
  }

  /** Every frame that holds (or held) the bytes of `digest`. */
  locations(digest: string): readonly Location[] {
    const first = this.located.get(digest);
    return first === undefined ? [] : [first, ...(this.copies.get(digest) ?? [])];
  }

  tombstone(digest: string): Tombstone | undefined {
    return this.tombstones.get(digest);
  }

  entry(digest: string): EnvelopeEntry | undefined {
    const tombstone = this.tombstones.get(digest);
    const d = digest as EntryDigest;
    if (tombstone !== undefined) return { code: "redacted", digest: d, size: tombstone.size, redactedAt: tombstone.redactedAt, reason: tombstone.reason };
    const location = this.located.get(digest);
    return location === undefined ? undefined : { code: "present", digest: d, size: location.size };
  }

  /** Entries in the order first written, then tombstones whose entry this catalog lacks. */
  *list(): Generator<EnvelopeEntry> {
    for (const digest of this.located.keys()) {
      const entry = this.entry(digest);
      if (entry !== undefined) yield entry;
    }
    for (const digest of this.tombstones.keys()) {
      if (this.located.has(digest)) continue;
      const entry = this.entry(digest);
      if (entry !== undefined) yield entry;
    }
  }

  counts(): { readonly present: { count: number; bytes: number }; readonly redacted: { count: number; bytes: number } } {
    return {
      present: { count: this.presentCount, bytes: this.presentBytes },
      redacted: { count: this.tombstones.size, bytes: this.redactedBytes },
    };
  }
}

/** Refuse a digest that is not 64 lowercase hex, whatever the type system was told. */
export function checkDigest(digest: string): void {
  const fault = typeof digest === "string" ? checkHex(digest, 64) : { code: "wrong_length" as const, expected: 64, found: 0 };
  if (fault !== undefined) throw new EnvelopeError({ code: "bad_digest", text: String(digest), detail: describeHexFault(fault) });
}

/**
 * Answer a read (SPEC §14.1, [M14.3]): a tombstone first, then the bytes of each frame
 * that holds the digest, re-hashed now. `present` only for bytes that hash to the digest
 * asked for; otherwise `digest_mismatch` with what the first copy hashes to.
 */
export async function readThrough<D extends EntryDigest>(
  catalog: Catalog,
  digest: D,
  readValue: (location: Location) => Promise<Uint8Array>,
): Promise<EnvelopeRead<D>> {
  checkDigest(digest);
  const tombstone = catalog.tombstone(digest);
  if (tombstone !== undefined) return { code: "redacted", redactedAt: tombstone.redactedAt, reason: tombstone.reason };
  const locations = catalog.locations(digest);
  let mismatch: string | undefined;
  for (const location of locations) {
    const bytes = await readValue(location);
    // The file ends inside the value (cut short by a crash or by hand): no bytes are held
    // there to have been altered, so that copy is absent, not a mismatch (SPEC §14.1).
    if (bytes.length < location.size) continue;
    const found = sha256Hex(bytes);
    if (sameHex(found, digest)) return { code: "present", bytes };
    mismatch ??= found;
  }
  return mismatch === undefined ? { code: "missing" } : { code: "digest_mismatch", expected: digest, found: mismatch };
}
