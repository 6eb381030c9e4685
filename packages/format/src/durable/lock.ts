import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { link, open, unlink } from "node:fs/promises";
import { match } from "ts-pattern";
import { sha256Hex } from "../crypto/sha256.js";
import { unmatched } from "../unreachable.js";
import { errnoOf } from "./sync.js";
import { PRIVATE_FILE_MODE } from "./files.js";
import { InputFileError } from "./input-file.js";
import { openRegularFile } from "./regular-file.js";

/**
 * One writer per record file (SPEC §13.3) and per Envelope store (§14.6): a lock file,
 * holding the owner's pid, host and a nonce. It is written whole under a temporary name and
 * linked into place, so it is never seen empty: a writer killed while taking it leaves only
 * its temporary file. A lock whose holder is provably gone (this host, and no process has
 * its pid) or that cannot be read (a lock this code never leaves) is stale, and is
 * recovered by one writer alone; a live holder's lock is never taken.
 */

/** Who holds a lock, as its file names them (SPEC §13.3). */
export interface LockHolder {
  /** Process id of the writer that took the lock. */
  readonly pid: number;
  /** Host name of the machine it ran on; a lock held on another host is never recovered. */
  readonly host: string;
  /**
   * When that process started (clock ticks since boot, Linux), where it could be read: a process now
   * holding the pid that started at another time is not the holder (SPEC §13.3).
   */
  readonly started?: string;
}

/** What a recovered lock held: its holder, or nothing readable. */
export type RecoveredLock = { readonly code: "dead_holder"; readonly holder: LockHolder } | { readonly code: "unreadable" };

/** `left by pid 123 on host, which no longer runs`, or why an unreadable lock was stale. */
export function describeRecoveredLock(recovered: RecoveredLock): string {
  return match(recovered)
    .with({ code: "dead_holder" }, (r) => `left by pid ${r.holder.pid} on ${r.holder.host}, which no longer runs`)
    .with({ code: "unreadable" }, () => "it named no holder that could be read (a writer killed while taking it)")
    .exhaustive(unmatched);
}

/** The lock taken (with how a stale one was recovered), or who holds it. */
export type LockResult =
  | { readonly ok: true; readonly release: () => Promise<void>; readonly recovered?: RecoveredLock }
  | { readonly ok: false; readonly lockPath: string; readonly holder?: LockHolder; readonly stale: boolean };

export function lockPathFor(path: string): string {
  return `${path}.lock`;
}

export function acquireLock(path: string): Promise<LockResult> {
  return acquireLockFile(lockPathFor(path));
}

/** A lock file is one short JSON line; more is not a lock this code wrote. */
const MAX_LOCK_BYTES = 4096;

/**
 * Take the lock file at `lockPath`, or say who holds it. A stale lock is recovered once, by
 * one writer: if another writer is recovering it, or takes the lock meanwhile, that writer
 * holds it and this one is refused.
 */
export async function acquireLockFile(lockPath: string): Promise<LockResult> {
  const started = processStart(process.pid);
  const mine = `${JSON.stringify({ pid: process.pid, host: hostname(), ...(started === undefined ? {} : { started }), nonce: randomBytes(16).toString("hex") })}\n`;
  if (await linkInPlace(lockPath, mine)) return held(lockPath, undefined);
  const found = await readLock(lockPath);
  if (found === undefined) {
    // Released between our attempt and the read: try once more, as if first.
    return (await linkInPlace(lockPath, mine)) ? held(lockPath, undefined) : refused(lockPath, await readLock(lockPath));
  }
  const recovered = staleness(found);
  if (recovered === undefined) return refused(lockPath, found);
  const claim = await claimRecovery(lockPath, found.text, mine);
  // The writer recovering it is named, not the stale holder: told the lock looks stale, a
  // user could remove the lock that writer is about to link.
  if (claim.code === "refused") return refused(lockPath, claim.recovering ?? (await readLock(lockPath)));
  try {
    // Ours alone to change now: the stale lock's holder is gone, and every other writer that
    // found it stale is refused its claim. Writers arriving now only link, never remove.
    const now = await readLockText(lockPath);
    if (now !== undefined && now !== found.text) return refused(lockPath, await readLock(lockPath));
    if (now !== undefined) await unlink(lockPath);
    return (await linkInPlace(lockPath, mine)) ? held(lockPath, recovered) : refused(lockPath, await readLock(lockPath));
  } finally {
    await claim.release();
  }
}

/** How a lock is stale (its holder gone, or nothing readable), undefined while its holder may run. */
function staleness(found: FoundLock): RecoveredLock | undefined {
  if (found.holder === undefined) return { code: "unreadable" };
  return isGone(found.holder) ? { code: "dead_holder", holder: found.holder } : undefined;
}

/** A writer killed while recovering leaves its claim; one claim of each level is passed over that way, at most this many. */
const MAX_CLAIM_LEVELS = 8;

/** A recovery claimed, to release when done; or refused, with the live writer recovering the lock where one was read. */
type Claim = { readonly code: "claimed"; readonly release: () => Promise<void> } | { readonly code: "refused"; readonly recovering?: FoundLock };

/**
 * The right to recover the stale lock whose text is `text`: a claim file named for that text
 * (`<lock>.recovering-<digest>.<level>`), taken as a lock is, so that one writer alone
 * removes the stale lock and links its own. Moving the lock aside to compare it, as before,
 * left the name empty while a live lock was being put back, and a third writer could take
 * it then: two writers held one file. A claim whose writer is gone (killed while recovering)
 * is passed over for the next level.
 */
async function claimRecovery(lockPath: string, text: string, mine: string): Promise<Claim> {
  const base = `${lockPath}.recovering-${sha256Hex(text).slice(0, 16)}`;
  for (let level = 0; level < MAX_CLAIM_LEVELS; level++) {
    const claim = `${base}.${level}`;
    if (await linkInPlace(claim, mine)) {
      return {
        code: "claimed",
        release: async () => {
          for (let left = 0; left <= level; left++) await unlink(`${base}.${left}`).catch(() => undefined);
        },
      };
    }
    const other = await readLock(claim);
    // Gone already: that writer recovered the lock, or found it taken.
    if (other === undefined) return { code: "refused" };
    if (staleness(other) === undefined) return { code: "refused", recovering: other };
  }
  return { code: "refused" };
}

function held(lockPath: string, recovered: RecoveredLock | undefined): LockResult {
  let released = false;
  return {
    ok: true,
    ...(recovered === undefined ? {} : { recovered }),
    release: async () => {
      if (released) return;
      released = true;
      await unlink(lockPath).catch(() => undefined);
    },
  };
}

function refused(lockPath: string, found: FoundLock | undefined): LockResult {
  const holder = found?.holder;
  return { ok: false, lockPath, ...(holder === undefined ? {} : { holder }), stale: holder !== undefined && isGone(holder) };
}

/** Write `text` to a temporary file, sync it, and link it to `lockPath`: false if that exists. */
async function linkInPlace(lockPath: string, text: string): Promise<boolean> {
  const temporary = `${lockPath}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(temporary, "wx", PRIVATE_FILE_MODE);
  try {
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temporary, lockPath);
    return true;
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

interface FoundLock {
  readonly text: string;
  readonly holder?: LockHolder;
}

/** The lock's text and holder; undefined when there is no lock file (any more). */
async function readLock(lockPath: string): Promise<FoundLock | undefined> {
  const text = await readLockText(lockPath);
  if (text === undefined) return undefined;
  const holder = holderOf(text);
  return holder === undefined ? { text } : { text, holder };
}

/**
 * The first {@link MAX_LOCK_BYTES} of the lock at `path`, undefined when there is none. One
 * that is no regular file (a FIFO: opening it to read would wait for a writer for ever) is
 * no lock this code wrote: it reads as empty, so unreadable, so stale (SPEC §13.3, §18).
 */
async function readLockText(path: string): Promise<string | undefined> {
  try {
    const handle = await openRegularFile(path);
    try {
      const buffer = Buffer.alloc(MAX_LOCK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, MAX_LOCK_BYTES, 0);
      return buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    if (error instanceof InputFileError) return "";
    throw error;
  }
}

function holderOf(text: string): LockHolder | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && "pid" in parsed && "host" in parsed) {
      const { pid, host } = parsed;
      const started = "started" in parsed && typeof parsed.started === "string" && /^\d+$/.test(parsed.started) ? parsed.started : undefined;
      if (typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0 && typeof host === "string")
        return { pid, host, ...(started === undefined ? {} : { started }) };
    }
  } catch {
    // Not JSON: a lock this code did not write whole.
  }
  return undefined;
}

/** A holder on this host whose pid no process has: it can never release the lock. */
function isGone(holder: LockHolder): boolean {
  return holder.host === hostname() && !processRuns(holder.pid, holder.started);
}

/**
 * Whether a process with this pid runs on this host (one we may not signal still runs).
 * Given `started` ({@link processStart} of the process that wrote a name down), a process
 * that now holds the pid but started at another time is another process: pids are reused,
 * within seconds on a busy machine whose `pid_max` is 32768.
 */
export function processRuns(pid: number, started?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (errnoOf(error) === "ESRCH") return false;
  }
  if (started === undefined) return true;
  const now = processStart(pid);
  return now === undefined || now === started;
}

/**
 * When the process `pid` started, in clock ticks since boot (Linux, `/proc/<pid>/stat`
 * field 22), or undefined where that cannot be read: with the pid, it names one process.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const started = fields[19];
    return started !== undefined && /^\d+$/.test(started) ? started : undefined;
  } catch {
    return undefined;
  }
}
