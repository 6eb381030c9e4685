import { unmatched } from "@aegis/format/internal";
import type { JsonValue } from "@aegis/format";
import { posix } from "node:path";
import { match } from "ts-pattern";
import type { CallAxes } from "./decide.js";
import { resolvePointer } from "./pointer.js";
import type { Bindings, NetBinding, PathAccess, ToolBinding } from "./bindings.js";

// A call's decision axes from its request and the bindings (SPEC §17.4): bindings.ts reads a
// bindings file; this derives what one call names under it.

/** The binding for a tool: an exact name first, then the first glob in file order that matches. */
function bindingFor(bindings: Bindings, toolId: string): ToolBinding | undefined {
  return bindings.tools.find((b) => b.glob === undefined && b.tool === toolId) ?? bindings.tools.find((b) => b.glob?.test(toolId) === true);
}

/** Why a bound parameter yielded no axis; reported, so that an operator can fix a binding. */
export type UnresolvedBinding =
  | { readonly code: "absent"; readonly pointer: string }
  | { readonly code: "not_a_string"; readonly pointer: string }
  | { readonly code: "several"; readonly what: "paths" | "endpoints"; readonly count: number }
  | { readonly code: "relative_path"; readonly pointer: string; readonly roots: number }
  /** A relative path, after the client named roots other than the file's (SPEC §17.4): the server's base is not known. */
  | { readonly code: "client_roots"; readonly pointer: string }
  | { readonly code: "home_path"; readonly pointer: string }
  | { readonly code: "path_too_long"; readonly pointer: string; readonly bytes: number }
  /** The disk gives the path two readings (see {@link DeriveContext.canonicalPath}). */
  | { readonly code: "ambiguous_path"; readonly pointer: string }
  | { readonly code: "bad_url"; readonly pointer: string }
  | { readonly code: "unknown_port"; readonly pointer: string };

/** A path the call named, resolved: lexically here, and then (by the caller) on the disk. */
interface BoundPath {
  /** As the request gave it: what `decision_axes.fs.path_raw` records. */
  readonly raw: string;
  /** Absolute and resolved: what `decision_axes.fs.path_canonical` records and an approval's scope holds. */
  readonly resolved: string;
  /** From the binding that named it: an approval's scope keeps read and written paths apart (SPEC §17.5). */
  readonly access: PathAccess;
}

/** What `deriveAxes` makes of one call. */
export interface Derived {
  /** The derived axes: `capability`, and `fs` or `net` when the call named exactly one. */
  readonly axes: CallAxes;
  /** Every path the call named, resolved (for an approval's scope), when all resolved. */
  readonly paths: readonly BoundPath[];
  /** Why bound parameters gave no axis, for an operator (`describeUnresolved`); empty when none failed. */
  readonly unresolved: readonly UnresolvedBinding[];
}

/** What `deriveAxes` may learn beyond the bindings file: whether the client moved the server's roots, and the host's own reading of a path. */
export interface DeriveContext {
  /**
   * The client has named roots other than the file's (answering the server's `roots/list`).
   * A server may then resolve a relative path against them, or drop those it cannot open
   * and keep its own, or take them only after calls already sent: the base is not known,
   * and a relative path is not resolved (SPEC §17.4).
   */
  readonly clientRoots?: boolean;
  /**
   * For a caller on the server's host: the path an absolute one (as named, `.` and `..`
   * not yet removed) names on the disk, or undefined when servers could take it for two
   * files. Without it, `path_canonical` is the lexical resolution.
   */
  readonly canonicalPath?: (absolute: string) => string | undefined;
}

/**
 * Derive the axes of one call from its request JSON (SPEC §17.4). Nothing is guessed: a
 * relative path with no single base, a `~` path, a URL whose port is not known, or a call
 * naming several paths or endpoints yields no `fs` or `net` axis, and a rule that needs one
 * then fails closed (SPEC §15.5). `path_canonical` is the lexical resolution, or what
 * `context.canonicalPath` makes of it.
 */
export function deriveAxes(bindings: Bindings, toolId: string, request: JsonValue | undefined, context: DeriveContext = {}): Derived {
  const binding = bindingFor(bindings, toolId);
  if (binding === undefined) return { axes: {}, paths: [], unresolved: [] };
  const unresolved: UnresolvedBinding[] = [];
  const roots = bindings.roots;
  const paths: BoundPath[] = [];
  for (const p of binding.paths) {
    const value = request === undefined ? undefined : resolvePointer(request, p.tokens);
    const named = pathsIn(value);
    if (named === undefined) {
      unresolved.push(value === undefined ? { code: "absent", pointer: p.pointer } : { code: "not_a_string", pointer: p.pointer });
      continue;
    }
    for (const raw of named) {
      const absolute = absolutePath(raw, roots, context.clientRoots === true);
      if (typeof absolute !== "string") {
        unresolved.push({ ...absolute, pointer: p.pointer });
        continue;
      }
      const resolved = context.canonicalPath === undefined ? posix.resolve(absolute) : context.canonicalPath(absolute);
      if (resolved === undefined) unresolved.push({ code: "ambiguous_path", pointer: p.pointer });
      else paths.push({ raw, resolved, access: p.access });
    }
  }
  const endpoints = binding.net === undefined || request === undefined ? [] : netOf(binding.net, request, unresolved);
  const axes: { -readonly [K in keyof CallAxes]: CallAxes[K] } = {};
  if (binding.capability !== undefined) axes.capability = binding.capability;
  // Every path bound, or none is given: a scope made of some of a call's paths would be a lie.
  const allBound = unresolved.length === 0;
  const first = paths[0];
  if (paths.length === 1 && first !== undefined && allBound) axes.fs = { path_raw: first.raw, path_canonical: first.resolved };
  else if (paths.length > 1) unresolved.push({ code: "several", what: "paths", count: paths.length });
  const endpoint = endpoints[0];
  if (endpoint !== undefined) axes.net = endpoint;
  return { axes, paths: allBound ? paths : [], unresolved };
}

/** A string, or an array of strings (a tool reading several files binds each). */
function pathsIn(value: JsonValue | undefined): readonly string[] | undefined {
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((v): v is string => typeof v === "string")) return value;
  return undefined;
}

/** Longer than any path a file system takes (PATH_MAX): bound, so a Line that names it stays small. */
const MAX_PATH_BYTES = 4096;

/** The path made absolute, its `.` and `..` left for whoever resolves it. */
function absolutePath(
  raw: string,
  roots: readonly string[],
  clientRoots: boolean,
):
  | string
  | { readonly code: "relative_path"; readonly roots: number }
  | { readonly code: "client_roots" }
  | { readonly code: "home_path" }
  | { readonly code: "path_too_long"; readonly bytes: number } {
  const bytes = Buffer.byteLength(raw, "utf8");
  if (bytes > MAX_PATH_BYTES || !raw.isWellFormed()) return { code: "path_too_long", bytes };
  if (raw.startsWith("~")) return { code: "home_path" };
  if (posix.isAbsolute(raw)) return raw;
  if (clientRoots) return { code: "client_roots" };
  const root = roots.length === 1 ? roots[0] : undefined;
  if (root === undefined) return { code: "relative_path", roots: roots.length };
  return `${root}/${raw}`;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { "http:": 80, "https:": 443, "ws:": 80, "wss:": 443, "ftp:": 21 };

function netOf(net: NetBinding, request: JsonValue, unresolved: UnresolvedBinding[]): { readonly host: string; readonly port: number }[] {
  if (net.code === "url") {
    const value = resolvePointer(request, net.tokens);
    if (typeof value !== "string") {
      unresolved.push(value === undefined ? { code: "absent", pointer: net.pointer } : { code: "not_a_string", pointer: net.pointer });
      return [];
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      unresolved.push({ code: "bad_url", pointer: net.pointer });
      return [];
    }
    const port = url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port);
    if (port === undefined || url.hostname === "") {
      unresolved.push({ code: url.hostname === "" ? "bad_url" : "unknown_port", pointer: net.pointer });
      return [];
    }
    return [{ host: url.hostname.replace(/^\[(.*)\]$/u, "$1").toLowerCase(), port }];
  }
  const host = resolvePointer(request, net.host);
  const port = resolvePointer(request, net.port);
  if (typeof host !== "string" || host === "") {
    unresolved.push(host === undefined ? { code: "absent", pointer: net.pointers[0] } : { code: "not_a_string", pointer: net.pointers[0] });
    return [];
  }
  const portNumber = typeof port === "number" ? port : typeof port === "string" && /^[0-9]{1,5}$/u.test(port) ? Number(port) : undefined;
  if (portNumber === undefined || !Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) {
    unresolved.push({ code: "unknown_port", pointer: net.pointers[1] });
    return [];
  }
  return [{ host: host.toLowerCase(), port: portNumber }];
}

/** One line for an operator: why a binding gave no axis. */
export function describeUnresolved(u: UnresolvedBinding): string {
  return match(u)
    .with({ code: "absent" }, (x) => `${x.pointer} is absent from the request`)
    .with({ code: "not_a_string" }, (x) => `${x.pointer} is not a string (or a list of strings)`)
    .with({ code: "several" }, (x) => `the call names ${x.count} ${x.what}; an axis is recorded only for exactly one`)
    .with(
      { code: "relative_path" },
      (x) => `${x.pointer} is a relative path and there ${x.roots === 0 ? "is no root" : `are ${x.roots} roots`} to resolve it against`,
    )
    .with({ code: "client_roots" }, (x) => `${x.pointer} is a relative path, and the client named roots of its own: which base the server takes is not known`)
    .with({ code: "home_path" }, (x) => `${x.pointer} starts with ~, whose meaning depends on the server's account`)
    .with({ code: "path_too_long" }, (x) => `${x.pointer} is ${x.bytes} bytes, longer than a path can be (or not well-formed Unicode)`)
    .with(
      { code: "ambiguous_path" },
      (x) => `${x.pointer} names two files, depending on how a server reads it (a .. after a symbolic link, or a name another spelling of which exists)`,
    )
    .with({ code: "bad_url" }, (x) => `${x.pointer} is not an absolute URL with a host`)
    .with({ code: "unknown_port" }, (x) => `${x.pointer} names no port, and its scheme has no known default`)
    .exhaustive(unmatched);
}
