import { closeSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { RequestDigest, ResponseDigest, ToolSpecDigest, type RecoveredLock } from "@aegis/format";
import { messageOf } from "@aegis/format/internal";
import { GroupCommit } from "@aegis/format/durable";
import { checkDigest, readThrough, type Catalog } from "./catalog.js";
import type { EnvelopeDamage } from "./damage.js";
import { EnvelopeError, io } from "./errors.js";
import { framePrefix } from "./frame.js";
import { encodeHead, reasonFault } from "./head.js";
import { writeIndexFile } from "./index-io.js";
import { DEFAULT_SEGMENT_BYTES, DESCRIPTOR_FILE, MAX_ENTRY_BYTES, SEGMENT_HEADER_BYTES, indexFileName, segmentNumberOf } from "./layout.js";
import type { RedactOutcome } from "./redaction.js";
import type { SegmentFiles } from "./segment-files.js";
import { BATCHED_VALUE_BYTES, SegmentWriter, type Active } from "./segment-writer.js";
import type { EntryDigest, EnvelopeEntry, EnvelopeRead, EnvelopeSource, EnvelopeStats } from "./source.js";
import { openStore, scrubAll } from "./store-open.js";

/** How {@link EnvelopeStore.open} opens, or creates, a store. Every member is optional. */
export interface EnvelopeStoreOptions {
  /** Start a new segment once the current one would pass this many bytes (SPEC §14.3). */
  readonly segmentBytes?: number;
  /** The clock a tombstone's `redacted_at` is read from. */
  readonly now?: () => Date;
  /**
   * The id of a store this open creates (16 bytes). Random by default; fixed only to
   * reproduce a store byte for byte (the conformance vectors). Ignored for an existing store.
   */
  readonly id?: Uint8Array;
  /** Create the store when the directory is absent or empty (default true); false refuses with `not_an_envelope`. */
  readonly create?: boolean;
}

/**
 * The live Envelope store, for the one process that writes it (SPEC §14). A directory of
 * append-only segment files; see SPEC §14.2 for the layout.
 *
 * Each put is one synchronous step: the bytes are hashed and taken before the method
 * returns (a value under 64 KiB copied into the batch the next flush writes with one
 * `pwritev`, a larger one written at once), so the bytes stored are the bytes hashed,
 * whatever the caller does with its array afterwards. Its promise resolves once an fsync
 * that began after the write has finished; puts made together share that write and that
 * fsync (group commit), as the Chain writer's appends do (ADR 0004). A failed write or
 * fsync stops the store.
 */
export class EnvelopeStore implements EnvelopeSource {
  private closing: Promise<void> | undefined;
  private closed = false;
  /** Entries appended and not yet durable: a second put of the same bytes waits on the first. */
  private readonly pending = new Map<string, Promise<void>>();
  /** Redactions from the tombstone's write until the bytes are gone from disk. */
  private readonly redactions = new Map<string, Promise<RedactOutcome>>();
  /** Index writes of sealed segments, one after another. */
  private sealing: Promise<void> = Promise.resolve();
  private readonly found: EnvelopeDamage[];
  private readonly segments: SegmentWriter;
  private readonly commit: GroupCommit;

  private constructor(
    /** The store directory, as given to {@link EnvelopeStore.open}. */
    readonly path: string,
    private readonly salt: Buffer,
    private readonly catalog: Catalog,
    active: Active,
    private readonly files: SegmentFiles,
    damage: readonly EnvelopeDamage[],
    private readonly releaseLock: () => Promise<void>,
    segmentBytes: number,
    private readonly now: () => Date,
    /** A stale lock this writer recovered on opening: its holder was gone (SPEC §14.6). */
    readonly recoveredLock: RecoveredLock | undefined,
  ) {
    this.found = [...damage];
    this.segments = new SegmentWriter(path, salt, active, files, segmentBytes, (full) => this.seal(full));
    this.commit = new GroupCommit(this.segments, (cause) => new EnvelopeError({ code: "failed", detail: cause.message }, { cause }));
  }

  /**
   * Open the store in `dir` for writing, creating it when the directory is absent or
   * empty. A torn tail left by a crash is cut back to the last whole frame; redactions a
   * crash interrupted are finished; damage is reported in {@link EnvelopeStore.damage}, never fatal.
   *
   * @throws EnvelopeError `locked` when another writer holds the store, `not_an_envelope`
   * when the directory holds other files, `unsupported_version`, `damaged_descriptor`, `io`.
   */
  static async open(dir: string, options: EnvelopeStoreOptions = {}): Promise<EnvelopeStore> {
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    if (!Number.isSafeInteger(segmentBytes) || segmentBytes <= SEGMENT_HEADER_BYTES) {
      throw new RangeError(`segmentBytes must be an integer above ${SEGMENT_HEADER_BYTES}`);
    }
    const o = await openStore(dir, options.create !== false, options.id);
    return new EnvelopeStore(dir, o.salt, o.catalog, o.active, o.files, o.damage, o.release, segmentBytes, options.now ?? (() => new Date()), o.recoveredLock);
  }

  /** Damage found on opening, and index writes that failed since. */
  get damage(): readonly EnvelopeDamage[] {
    return this.found;
  }

  /**
   * Keep the verbatim request bytes; resolves with their digest once they are durable
   * (SPEC §14.1, [M9.1]): the store hashes what it is given, and nothing else. The bytes
   * are hashed and taken (written, or copied to be written with their batch) before this
   * returns, so the caller may reuse its array at once.
   *
   * @throws EnvelopeError (as a rejection) `too_large` for more than `MAX_ENTRY_BYTES`,
   * `not_bytes`, `closed` once {@link EnvelopeStore.close} was called, `failed` once a write
   * or fsync has failed.
   */
  putRequest(bytes: Uint8Array): Promise<RequestDigest> {
    return this.keep(bytes, RequestDigest.of);
  }

  /** Keep the verbatim response bytes; as {@link EnvelopeStore.putRequest}. */
  putResponse(bytes: Uint8Array): Promise<ResponseDigest> {
    return this.keep(bytes, ResponseDigest.of);
  }

  /** Keep the canonical bytes of a tool definition (SPEC §17.6); as {@link EnvelopeStore.putRequest}. */
  putToolSpec(bytes: Uint8Array): Promise<ToolSpecDigest> {
    return this.keep(bytes, ToolSpecDigest.of);
  }

  private keep<D extends EntryDigest>(bytes: Uint8Array, hash: (bytes: Uint8Array) => D): Promise<D> {
    if (!(bytes instanceof Uint8Array)) {
      return Promise.reject(new EnvelopeError({ code: "not_bytes", detail: `an Envelope keeps bytes (a Uint8Array), not ${typeof bytes}` }));
    }
    if (bytes.length > MAX_ENTRY_BYTES) return Promise.reject(new EnvelopeError({ code: "too_large", bytes: bytes.length, limit: MAX_ENTRY_BYTES }));
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    // One synchronous step from here to the write: the bytes hashed are the bytes written.
    const digest = hash(bytes);
    return this.store(digest, bytes).then(() => digest);
  }

  private refusal(): EnvelopeError | undefined {
    const failure = this.commit.failure;
    if (failure instanceof EnvelopeError) return failure;
    if (this.closed) return new EnvelopeError({ code: "closed" });
    return undefined;
  }

  /** The critical section of a put: no await between the checks and the index update. */
  private store(digest: string, bytes: Uint8Array): Promise<void> {
    // A redacted digest's bytes are never kept again (SPEC §14.8, [M14.11]); the put resolves
    // once the tombstone that answers for them is durable, not before.
    if (this.catalog.tombstone(digest) !== undefined) {
      const redaction = this.redactions.get(digest);
      return redaction === undefined ? Promise.resolve() : redaction.then(() => undefined);
    }
    const pending = this.pending.get(digest);
    if (pending !== undefined) return pending;
    // Stored once (SPEC §14.1, [M14.2]); it is durable, or it would be pending.
    if (this.catalog.has(digest)) return Promise.resolve();
    const prefix = framePrefix(this.salt, encodeHead({ kind: "entry", digest }), bytes.length);
    // A small value joins its batch as a copy: the bytes written are the bytes hashed now.
    const value = bytes.length < BATCHED_VALUE_BYTES ? Buffer.from(bytes) : bytes;
    let frame: number;
    try {
      frame = this.segments.append([prefix, value], bytes.length < BATCHED_VALUE_BYTES);
    } catch (error) {
      return Promise.reject(this.commit.fail(error));
    }
    const active = this.segments.active;
    active.records.push({ kind: "entry", digest, offset: frame, size: bytes.length });
    this.catalog.addEntry(digest, { segment: active.segment, frame, size: bytes.length });
    const durable = this.commit.durable(undefined);
    this.pending.set(digest, durable);
    const forget = (): void => void this.pending.delete(digest);
    durable.then(forget, forget);
    return durable;
  }

  /** Write a full segment's index once its frames are durable and its redactions done. */
  private seal(full: Active): void {
    const durable = this.commit.durable(undefined);
    // Observed now: a failed fsync rejects it before the chain below gets to it, and the
    // failure reaches callers through their puts, not as an unhandled rejection.
    durable.catch(() => undefined);
    const redactions = [...this.redactions.values()];
    this.sealing = this.sealing
      .then(async () => {
        await durable;
        // A sealed segment's tombstones are not scanned on open: their scrubs must be done first.
        await Promise.all(redactions);
        await writeIndexFile(this.path, this.salt, full.segment, full.size, full.records);
      })
      .catch((error: unknown) => {
        this.found.push({ code: "index_not_written", path: join(this.path, indexFileName(full.segment)), detail: messageOf(error) });
      })
      .finally(() => {
        this.segments.forget(full);
        this.files.unpin(full.segment);
      });
  }

  /**
   * Read `digest` (SPEC §14.1): its bytes re-hashed now, `missing`, `digest_mismatch`, or
   * `redacted`. A put still becoming durable is waited for.
   */
  async get<D extends EntryDigest>(digest: D): Promise<EnvelopeRead<D>> {
    checkDigest(digest);
    if (this.closing !== undefined) throw new EnvelopeError({ code: "closed" });
    await this.pending.get(digest)?.catch(() => undefined);
    return readThrough(this.catalog, digest, (location) => this.files.readValue(location));
  }

  /**
   * What the index says of one digest, without reading its bytes: `present` (held, not
   * verified) or `redacted`; undefined when the store holds neither.
   *
   * @throws EnvelopeError `bad_digest` when `digest` is not 64 lowercase hex.
   */
  async entry(digest: EntryDigest): Promise<EnvelopeEntry | undefined> {
    checkDigest(digest);
    return this.catalog.entry(digest);
  }

  /** Every entry in the order first written, then the tombstones whose entry is not held (SPEC §14.1). */
  async *entries(): AsyncGenerator<EnvelopeEntry> {
    yield* this.catalog.list();
  }

  /** Counts and sizes of entries and tombstones, from the index, and of the store's files on disk now. */
  async stats(): Promise<EnvelopeStats> {
    return { ...this.catalog.counts(), ...(await directoryFiles(this.path)) };
  }

  /**
   * Remove the bytes of `digest` and keep a tombstone saying when and why (SPEC §14.8):
   * the tombstone is made durable, then the bytes are overwritten with zeros where they
   * lie and the file synced, and only then does this resolve `redacted`. From the moment
   * it is called, `get` answers `redacted` and a put of the same bytes keeps nothing.
   *
   * @throws EnvelopeError `bad_digest`, `closed`, `failed`, `io`.
   */
  redact(digest: EntryDigest, reason: string): Promise<RedactOutcome> {
    try {
      checkDigest(digest);
    } catch (error) {
      return Promise.reject(error);
    }
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    const refusedReason = typeof reason === "string" ? reasonFault(reason) : "a reason is text";
    if (refusedReason !== undefined) return Promise.resolve({ code: "reason_refused", detail: refusedReason });
    const inFlight = this.redactions.get(digest);
    if (inFlight !== undefined) return inFlight.then(() => this.alreadyRedacted(digest));
    const tombstone = this.catalog.tombstone(digest);
    if (tombstone !== undefined) return Promise.resolve({ code: "already_redacted", redactedAt: tombstone.redactedAt, reason: tombstone.reason });
    const location = this.catalog.location(digest);
    if (location === undefined) return Promise.resolve({ code: "missing" });

    let redactedAt: string;
    try {
      redactedAt = readClock(this.now);
    } catch (error) {
      return Promise.reject(error);
    }
    const head = encodeHead({ kind: "tombstone", digest, redactedAt, reason, size: location.size });
    let frame: number;
    try {
      frame = this.segments.append([framePrefix(this.salt, head, 0)], true);
    } catch (error) {
      return Promise.reject(this.commit.fail(error));
    }
    this.segments.active.records.push({ kind: "tombstone", digest, offset: frame, size: location.size });
    this.catalog.addTombstone(digest, { redactedAt, reason, size: location.size });
    const job = this.commit
      .durable(undefined)
      .then(async () => {
        try {
          await scrubAll(this.path, this.catalog.locations(digest));
        } catch (error) {
          // The bytes may still be on disk: stop, so the next open (which scans this
          // segment, as its index is not written) finishes the redaction.
          throw this.commit.fail(error);
        }
      })
      .then((): RedactOutcome => ({
        code: "redacted",
        digest,
        redactedAt,
        reason,
        removedBytes: this.catalog.locations(digest).reduce((n, l) => n + l.size, 0),
      }));
    this.redactions.set(digest, job);
    const forget = (): void => void this.redactions.delete(digest);
    job.then(forget, forget);
    return job;
  }

  private alreadyRedacted(digest: string): RedactOutcome {
    const tombstone = this.catalog.tombstone(digest);
    return tombstone === undefined ? { code: "missing" } : { code: "already_redacted", redactedAt: tombstone.redactedAt, reason: tombstone.reason };
  }

  /**
   * Wait for every put and redaction, write the active segment's index (so the next open
   * reads it instead of scanning), and release the store. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<void> {
    this.closed = true;
    const active = this.segments.active;
    try {
      await Promise.allSettled([...this.pending.values(), ...this.redactions.values()]);
      await this.sealing;
      if (this.commit.failure === undefined) {
        const { segment, size, records } = active;
        await writeIndexFile(this.path, this.salt, segment, size, records).catch((error: unknown) => {
          this.found.push({ code: "index_not_written", path: join(this.path, indexFileName(segment)), detail: messageOf(error) });
        });
      }
    } finally {
      this.files.close();
      closeSync(active.fd);
      await this.releaseLock();
    }
  }
}

/** The files of a store's layout (descriptor, segments, indexes) and their total size. */
export async function directoryFiles(dir: string): Promise<{ readonly files: number; readonly diskBytes: number }> {
  let files = 0;
  let diskBytes = 0;
  for (const name of await io(dir, () => readdir(dir))) {
    if (name !== DESCRIPTOR_FILE && segmentNumberOf(name, ".seg") === undefined && segmentNumberOf(name, ".idx") === undefined) continue;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info === undefined) continue;
    files++;
    diskBytes += info.size;
  }
  return { files, diskBytes };
}

/** A tombstone's `redacted_at` from the store's clock, refused (nothing written) when it is no instant. */
function readClock(now: () => Date): string {
  const date = now();
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new TypeError(`the Envelope's clock returned ${String(date)}, not a point in time: nothing was redacted`);
  }
  return date.toISOString();
}
