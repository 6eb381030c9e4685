import { lstat, realpath } from "node:fs/promises";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { describeIoError } from "@aegis/format/internal";
import { WrapError } from "../wrap-error.js";
import type { WrapOptions } from "../wrap-options.js";

/** What `aegis wrap --confine` grants the server (SPEC §17.11), as the operator typed it. */
export type ConfineRequest = NonNullable<WrapOptions["confine"]>;

/** A path granted: as the record names it (absolute), and where it really is (symbolic links followed). */
export interface PathGrant {
  readonly path: string;
  readonly real: string;
}

/** A destination granted: `host:port` as given. */
export interface NetGrant {
  readonly host: string;
  readonly port: number;
  readonly text: string;
}

/** The grants, checked and made absolute. */
export interface Grants {
  /** Read-only paths: those read and not written. */
  readonly read: readonly PathGrant[];
  readonly write: readonly PathGrant[];
  readonly net: readonly NetGrant[];
  readonly execSupport: boolean;
}

/**
 * The paths a dynamically linked program needs to start: the reference's list, those that
 * exist. `/dev` and `/proc` are not the host's: a minimal `/dev` and the sandbox's own
 * `/proc`, whose processes are the sandbox's alone (SPEC §17.11).
 */
export const EXEC_SUPPORT = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/dev", "/proc"] as const;

/**
 * Check and resolve `request` against `cwd`. A path that does not exist, one under `/proc`
 * (the host's processes: `/proc/<pid>/root` reaches every file), and a destination that is
 * not `HOST:PORT` are refused before anything is opened.
 *
 * @throws WrapError `options`.
 */
export async function grantsOf(request: ConfineRequest, cwd: string): Promise<Grants> {
  const write = await pathsOf(request.write, "--allow-write", cwd);
  const written = new Set(write.map((g) => g.path));
  const read = (await pathsOf(request.read, "--allow-read", cwd)).filter((g) => !written.has(g.path));
  return { read, write, net: uniqueBy(request.net.map(netGrantOf), (g) => g.text), execSupport: request.execSupport };
}

async function pathsOf(given: readonly string[], flag: string, cwd: string): Promise<PathGrant[]> {
  const out: PathGrant[] = [];
  for (const text of given) {
    if (text === "") throw options(`${flag} takes a path, not an empty string`);
    const path = resolve(cwd, text);
    if (path === "/proc" || path.startsWith("/proc/"))
      throw options(
        `${flag} ${text}: /proc is never granted from the host (its /proc/<pid>/root reaches every file); --allow-exec-support gives the sandbox a /proc of its own`,
      );
    try {
      await lstat(path);
      const real = await realpath(path);
      if (real === "/proc" || real.startsWith("/proc/")) throw options(`${flag} ${text}: it leads to ${real}, and /proc is never granted from the host`);
      out.push({ path, real });
    } catch (error) {
      if (error instanceof WrapError) throw error;
      throw options(`${flag} ${text}: ${describeIoError(error)}`);
    }
  }
  return uniqueBy(out, (g) => g.path);
}

function netGrantOf(text: string): NetGrant {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(text);
  const port = match === null ? Number.NaN : Number(match[2]);
  const host = (match?.[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  if (match === null || !(port >= 1 && port <= 65535) || (host.includes(":") && isIP(host) !== 6))
    throw options(`--allow-net takes HOST:PORT (127.0.0.1:8080, [::1]:8080, api.example.com:443), not ${JSON.stringify(text)}`);
  return { host: host.toLowerCase(), port, text: `${isIP(host) === 6 ? `[${host}]` : host.toLowerCase()}:${port}` };
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(key(item)) && seen.add(key(item)) !== undefined);
}

function options(detail: string): WrapError {
  return new WrapError({ code: "options", detail });
}
