import { hostname } from "node:os";
import { open, readFile, unlink } from "node:fs/promises";
import { errnoOf } from "./sync.js";

/**
 * One writer per record file (SPEC §13.3): `<file>.lock`, created exclusively, holding the
 * owner's pid and host. A second writer is refused; it never interleaves.
 */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
}

export type LockResult =
  | { readonly ok: true; readonly release: () => Promise<void> }
  | { readonly ok: false; readonly lockPath: string; readonly holder?: LockHolder; readonly stale: boolean };

export function lockPathFor(path: string): string {
  return `${path}.lock`;
}

export function acquireLock(path: string): Promise<LockResult> {
  return acquireLockFile(lockPathFor(path));
}

/**
 * Take the lock file at `lockPath` (created exclusively, holding this process's pid and
 * host), or say who holds it and whether that holder looks dead. Shared by the Chain writer
 * and the Envelope store (SPEC §13.3, §14.6).
 */
export async function acquireLockFile(lockPath: string): Promise<LockResult> {
  const me: LockHolder = { pid: process.pid, host: hostname() };
  try {
    const handle = await open(lockPath, "wx", 0o644);
    try {
      await handle.writeFile(`${JSON.stringify(me)}\n`);
      await handle.sync();
    } catch (error) {
      // An empty lock would refuse every later writer and name no holder: take it back.
      await handle.close().catch(() => undefined);
      await unlink(lockPath).catch(() => undefined);
      throw error;
    }
    await handle.close();
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
    const holder = await readHolder(lockPath);
    return { ok: false, lockPath, ...(holder === undefined ? {} : { holder }), stale: holder !== undefined && isStale(holder) };
  }
  let released = false;
  return {
    ok: true,
    release: async () => {
      if (released) return;
      released = true;
      await unlink(lockPath).catch(() => undefined);
    },
  };
}

async function readHolder(lockPath: string): Promise<LockHolder | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(lockPath, "utf8"));
    if (typeof parsed === "object" && parsed !== null && "pid" in parsed && "host" in parsed) {
      const { pid, host } = parsed;
      if (typeof pid === "number" && typeof host === "string") return { pid, host };
    }
  } catch {
    // An unreadable lock still refuses the writer; it just names no holder.
  }
  return undefined;
}

/** A lock left by a process on this host that no longer runs. Reported, never broken silently. */
function isStale(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return errnoOf(error) === "ESRCH";
  }
}
