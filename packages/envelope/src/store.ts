import { closeSync, ftruncateSync, fsyncSync, openSync, writevSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { RequestDigest, ResponseDigest, ToolSpecDigest, acquireLockFile as acquireLock, makeDirectories } from "@aegis/format";
import { Catalog, checkDigest, readThrough, type Location } from "./catalog.js";
import type { EnvelopeDamage } from "./damage.js";
import { createDescriptor, encodeSegmentHeader } from "./descriptor.js";
import { loadDirectory, type SegmentState } from "./directory.js";
import { EnvelopeError, io, ioError } from "./errors.js";
import { framePrefix } from "./frame.js";
import { encodeHead, reasonFault } from "./head.js";
import type { IndexRecord } from "./index-file.js";
import { writeIndexFile } from "./index-io.js";
import {
  DEFAULT_SEGMENT_BYTES,
  DESCRIPTOR_FILE,
  LOCK_FILE,
  MAX_ENTRY_BYTES,
  SEGMENT_HEADER_BYTES,
  indexFileName,
  segmentFileName,
  segmentNumberOf,
} from "./layout.js";
import { isScrubbed, scrubValue, type RedactOutcome } from "./redaction.js";
import { SegmentFiles } from "./segment-files.js";
import type { EntryDigest, EnvelopeEntry, EnvelopeRead, EnvelopeSource, EnvelopeStats } from "./source.js";
import { syncDirectory, syncNow, syncOffThread } from "./sync.js";

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

type Waiter = { readonly resolve: () => void; readonly reject: (error: Error) => void };

/** The segment puts append to. */
interface Active {
  readonly segment: number;
  readonly path: string;
  readonly fd: number;
  size: number;
  readonly records: IndexRecord[];
}

/** Two fsyncs in flight let the next batch be synced while the previous one finishes (ADR 0004). */
const MAX_SYNCS_IN_FLIGHT = 2;
/** A burst of this many puts starts its fsync without waiting for the end of the tick. */
const EAGER_BATCH = 16;
/**
 * Values below this size are copied and written together with the rest of their batch (one
 * `pwritev` per batch: a system call per put cost more than the rest of a 1 KiB put);
 * larger ones are written from the caller's bytes at once, sparing the copy.
 */
const BATCHED_VALUE_BYTES = 64 * 1024;
/** Buffers per `pwritev`, under the kernel's IOV_MAX (1024). */
const IOV_PER_WRITE = 512;

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
  private waiters: Waiter[] = [];
  private readonly dirty = new Set<number>();
  private syncDirectoryNext = false;
  private scheduled = false;
  private syncing = 0;
  private lastSynced: Promise<unknown> = Promise.resolve();
  private failure: EnvelopeError | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;
  /** Entries appended and not yet durable: a second put of the same bytes waits on the first. */
  private readonly pending = new Map<string, Promise<void>>();
  /** Redactions from the tombstone's write until the bytes are gone from disk. */
  private readonly redactions = new Map<string, Promise<RedactOutcome>>();
  /** Index writes of sealed segments, one after another. */
  private sealing: Promise<void> = Promise.resolve();
  private readonly found: EnvelopeDamage[];
  /** Frames appended to the active segment and not yet written, from `unwrittenFrom`. */
  private unwritten: Uint8Array[] = [];
  private unwrittenFrom = 0;

  private constructor(
    readonly path: string,
    private readonly salt: Buffer,
    private readonly catalog: Catalog,
    private active: Active,
    private readonly files: SegmentFiles,
    damage: readonly EnvelopeDamage[],
    private readonly releaseLock: () => Promise<void>,
    private readonly segmentBytes: number,
    private readonly now: () => Date,
  ) {
    this.found = [...damage];
  }

  /**
   * Open the store in `dir` for writing, creating it when the directory is absent or
   * empty. A torn tail left by a crash is cut back to the last whole frame; redactions a
   * crash interrupted are finished; damage is reported in {@link damage}, never fatal.
   *
   * @throws EnvelopeError `locked` when another writer holds the store, `not_an_envelope`
   * when the directory holds other files, `unsupported_version`, `damaged_descriptor`, `io`.
   */
  static async open(dir: string, options: EnvelopeStoreOptions = {}): Promise<EnvelopeStore> {
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    if (!Number.isSafeInteger(segmentBytes) || segmentBytes <= SEGMENT_HEADER_BYTES) {
      throw new RangeError(`segmentBytes must be an integer above ${SEGMENT_HEADER_BYTES}`);
    }
    if (options.create === false && !(await exists(join(dir, DESCRIPTOR_FILE)))) {
      throw new EnvelopeError({
        code: "not_an_envelope",
        path: dir,
        detail: `no ${DESCRIPTOR_FILE} descriptor: not a store (and this open does not create one)`,
      });
    }
    await io(dir, () => makeDirectories(dir));
    const lockPath = join(dir, LOCK_FILE);
    const lock = await io(lockPath, () => acquireLock(lockPath));
    if (!lock.ok) {
      throw new EnvelopeError({ code: "locked", lockPath: lock.lockPath, ...(lock.holder === undefined ? {} : { holder: lock.holder }), stale: lock.stale });
    }
    const opened: number[] = [];
    try {
      if (!(await exists(join(dir, DESCRIPTOR_FILE)))) {
        const others = (await io(dir, () => readdir(dir))).filter((name) => name !== LOCK_FILE && name !== `${DESCRIPTOR_FILE}.tmp`);
        if (others.length > 0) {
          throw new EnvelopeError({
            code: "not_an_envelope",
            path: dir,
            detail: `the directory holds files (${others.slice(0, 3).join(", ")}) but no ${DESCRIPTOR_FILE}`,
          });
        }
        await createDescriptor(dir, options.id);
      }
      const loaded = await loadDirectory(dir, true);
      const { salt, catalog } = loaded;
      const cut = new Set<string>();
      for (const segment of loaded.segments) {
        if (repairTail(segment, salt)) cut.add(segment.path);
      }
      // Redactions a crash interrupted: the tombstone is durable, the bytes may not be gone yet.
      for (const segment of loaded.segments) {
        for (const digest of segment.scannedTombstones) await scrubAll(dir, catalog.locations(digest));
      }
      const damage = loaded.damage.map((d) => (d.code === "torn_tail" && cut.has(d.path) ? { ...d, cut: true } : d));
      // Appends continue in the last segment, unless a later number is missing (its index
      // may still be there) or the last one's header is damaged: then a new segment starts.
      const last = loaded.segments.at(-1);
      const reusable = last !== undefined && last.segment === loaded.highest && !damage.some((d) => d.code === "damaged_header" && d.path === last.path);
      for (const segment of loaded.segments) {
        if (segment === last && reusable) continue;
        if (!segment.indexed || cut.has(segment.path))
          await io(segment.path, () => writeIndexFile(dir, salt, segment.segment, endAfterRepair(segment), segment.records ?? []));
      }
      const files = new SegmentFiles(dir);
      let active: Active;
      if (last !== undefined && reusable) {
        const fd = await io(last.path, async () => openSync(last.path, "r+"));
        opened.push(fd);
        active = { segment: last.segment, path: last.path, fd, size: endAfterRepair(last), records: [...(last.records ?? [])] };
      } else {
        const segment = loaded.highest + 1;
        const path = join(dir, segmentFileName(segment));
        const fd = await io(path, async () => createSegment(path, segment, salt));
        opened.push(fd);
        await io(dir, () => syncDirectory(dir));
        active = { segment, path, fd, size: SEGMENT_HEADER_BYTES, records: [] };
      }
      files.pin(active.segment, active.fd);
      return new EnvelopeStore(dir, salt, catalog, active, files, damage, lock.release, segmentBytes, options.now ?? (() => new Date()));
    } catch (error) {
      for (const fd of opened) closeSync(fd);
      await lock.release();
      throw error;
    }
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
   */
  putRequest(bytes: Uint8Array): Promise<RequestDigest> {
    return this.keep(bytes, RequestDigest.of);
  }

  /** Keep the verbatim response bytes; as {@link putRequest}. */
  putResponse(bytes: Uint8Array): Promise<ResponseDigest> {
    return this.keep(bytes, ResponseDigest.of);
  }

  /** Keep the canonical bytes of a tool definition (SPEC §17.6); as {@link putRequest}. */
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
    if (this.failure !== undefined) return this.failure;
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
      frame = this.append([prefix, value], bytes.length < BATCHED_VALUE_BYTES);
    } catch (error) {
      return Promise.reject(this.fail(error, []));
    }
    this.active.records.push({ kind: "entry", digest, offset: frame, size: bytes.length });
    this.catalog.addEntry(digest, { segment: this.active.segment, frame, size: bytes.length });
    const durable = this.commit();
    this.pending.set(digest, durable);
    const forget = (): void => void this.pending.delete(digest);
    durable.then(forget, forget);
    return durable;
  }

  /**
   * Append one frame at the end of the active segment, rotating first when it is full:
   * into the batch that the next flush writes, or (`batched` false) written now, after
   * the batch, so that frames reach the file in the order they were appended.
   */
  private append(parts: readonly Uint8Array[], batched: boolean): number {
    const length = parts.reduce((n, p) => n + p.length, 0);
    if (this.active.size > SEGMENT_HEADER_BYTES && this.active.size + length > this.segmentBytes) this.rotate();
    const frame = this.active.size;
    if (batched) {
      if (this.unwritten.length === 0) this.unwrittenFrom = frame;
      this.unwritten.push(...parts);
    } else {
      this.writeBatch();
      writeAllSync(this.active.fd, parts, frame);
    }
    this.active.size += length;
    this.dirty.add(this.active.fd);
    return frame;
  }

  /** Write the batch to the active segment: one `pwritev` for every frame appended since the last. */
  private writeBatch(): void {
    if (this.unwritten.length === 0) return;
    const parts = this.unwritten;
    this.unwritten = [];
    writeAllSync(this.active.fd, parts, this.unwrittenFrom);
  }

  /**
   * Start the next segment (SPEC §14.3). Synchronous, inside the put that needs it; the
   * new file's directory entry is synced with the next batch, and the full segment's
   * index is written once everything in it is durable.
   */
  private rotate(): void {
    this.writeBatch();
    const full = this.active;
    const segment = full.segment + 1;
    const path = join(this.path, segmentFileName(segment));
    const fd = createSegment(path, segment, this.salt, false);
    this.active = { segment, path, fd, size: SEGMENT_HEADER_BYTES, records: [] };
    this.files.pin(segment, fd);
    this.dirty.add(fd);
    this.syncDirectoryNext = true;
    this.seal(full);
  }

  /** Write a full segment's index once its frames are durable and its redactions done. */
  private seal(full: Active): void {
    const durable = this.commit();
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
        this.found.push({
          code: "index_not_written",
          path: join(this.path, indexFileName(full.segment)),
          detail: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        this.dirty.delete(full.fd);
        this.files.unpin(full.segment);
      });
  }

  /** A promise that resolves once everything written so far is durable. */
  private commit(): Promise<void> {
    const durable = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.waiters.length >= EAGER_BATCH && this.syncing < MAX_SYNCS_IN_FLIGHT) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(() => this.flush());
    }
    return durable;
  }

  /**
   * fsync every file written since the last flush (and the directory, after a rotation),
   * then resolve this batch's puts, after every earlier batch. A lone put with nothing in
   * flight is synced inline, as the Chain writer does (ADR 0004).
   */
  private flush(): void {
    this.scheduled = false;
    if (this.waiters.length === 0 || this.failure !== undefined || this.syncing >= MAX_SYNCS_IN_FLIGHT) return;
    try {
      this.writeBatch();
    } catch (error) {
      this.fail(error, []);
      return;
    }
    const waiters = this.waiters;
    const fds = [...this.dirty];
    const directory = this.syncDirectoryNext;
    this.waiters = [];
    this.dirty.clear();
    this.syncDirectoryNext = false;
    this.syncing++;
    const [only] = fds;
    const synced =
      waiters.length === 1 && this.syncing === 1 && fds.length === 1 && !directory && only !== undefined
        ? syncNow(only)
        : Promise.all([...fds.map(syncOffThread), directory ? syncDirectory(this.path) : undefined]);
    this.lastSynced = Promise.all([this.lastSynced, synced]).then(
      () => {
        this.syncing--;
        if (this.failure !== undefined) for (const w of waiters) w.reject(this.failure);
        else for (const w of waiters) w.resolve();
        this.flush();
      },
      (error: unknown) => {
        this.syncing--;
        this.fail(error, waiters);
      },
    );
  }

  private fail(error: unknown, waiters: readonly Waiter[]): EnvelopeError {
    this.failure ??= new EnvelopeError({ code: "failed", detail: error instanceof Error ? error.message : String(error) }, { cause: error });
    for (const w of [...waiters, ...this.waiters]) w.reject(this.failure);
    this.waiters = [];
    return this.failure;
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
      frame = this.append([framePrefix(this.salt, head, 0)], true);
    } catch (error) {
      return Promise.reject(this.fail(error, []));
    }
    this.active.records.push({ kind: "tombstone", digest, offset: frame, size: location.size });
    this.catalog.addTombstone(digest, { redactedAt, reason, size: location.size });
    const job = this.commit()
      .then(async () => {
        try {
          await scrubAll(this.path, this.catalog.locations(digest));
        } catch (error) {
          // The bytes may still be on disk: stop, so the next open (which scans this
          // segment, as its index is not written) finishes the redaction.
          throw this.fail(error, []);
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
    try {
      await Promise.allSettled([...this.pending.values(), ...this.redactions.values()]);
      await this.sealing;
      if (this.failure === undefined) {
        const { segment, size, records } = this.active;
        await writeIndexFile(this.path, this.salt, segment, size, records).catch((error: unknown) => {
          this.found.push({
            code: "index_not_written",
            path: join(this.path, indexFileName(segment)),
            detail: error instanceof Error ? error.message : String(error),
          });
        });
      }
    } finally {
      this.files.close();
      closeSync(this.active.fd);
      await this.releaseLock();
    }
  }
}

/** Write all of `parts` at `position`: `writev` may write less than asked. */
function writeAllSync(fd: number, parts: readonly Uint8Array[], position: number): void {
  let pending = parts.filter((p) => p.length > 0);
  let at = position;
  while (pending.length > 0) {
    let written = writevSync(fd, pending.length > IOV_PER_WRITE ? pending.slice(0, IOV_PER_WRITE) : pending, at);
    at += written;
    const rest: Uint8Array[] = [];
    for (const part of pending) {
      if (written >= part.length) {
        written -= part.length;
        continue;
      }
      rest.push(written > 0 ? part.subarray(written) : part);
      written = 0;
    }
    pending = rest;
  }
}

/** Create a segment file with its header; synced here only when `sync` (else with the next batch). */
function createSegment(path: string, segment: number, salt: Buffer, sync = true): number {
  const fd = openSync(path, "wx+", 0o644);
  try {
    writeAllSync(fd, [encodeSegmentHeader(segment, salt)], 0);
    if (sync) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/**
 * Cut a segment's torn tail back to its last whole frame, or rewrite a torn header
 * (SPEC §14.5, [M14.8]). Only bytes no put was acknowledged for are removed: an
 * acknowledged frame was whole and synced before its put resolved.
 */
function repairTail(segment: SegmentState, salt: Buffer): boolean {
  if (!segment.tornHeader && segment.end >= segment.size) return false;
  let fd: number;
  try {
    fd = openSync(segment.path, "r+");
  } catch (error) {
    throw ioError(segment.path, error);
  }
  try {
    if (segment.tornHeader) {
      ftruncateSync(fd, 0);
      writeAllSync(fd, [encodeSegmentHeader(segment.segment, salt)], 0);
    } else {
      ftruncateSync(fd, segment.end);
    }
    fsyncSync(fd);
  } catch (error) {
    throw ioError(segment.path, error);
  } finally {
    closeSync(fd);
  }
  return true;
}

function endAfterRepair(segment: SegmentState): number {
  return segment.tornHeader ? SEGMENT_HEADER_BYTES : segment.end;
}

async function scrubAll(dir: string, locations: readonly Location[]): Promise<void> {
  for (const location of locations) {
    const path = join(dir, segmentFileName(location.segment));
    if (!(await io(path, () => isScrubbed(dir, location)))) await io(path, () => scrubValue(dir, location));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT") return false;
    throw ioError(path, error);
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
