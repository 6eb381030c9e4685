import { unmatched } from "@aegis/format/internal";
import { posix } from "node:path";
import { decodeUtf8, type JsonValue } from "@aegis/format/internal";
import { match } from "ts-pattern";
import type { Node as YamlNode } from "yaml";
import type { CallAxes } from "./decide.js";
import { compileGlob, type Glob } from "./glob.js";
import { parsePointer, resolvePointer } from "./pointer.js";
import { describePolicyProblem, type PolicyProblem } from "./problems.js";
import { member, readYaml, readYamlFile, type Entries, type Tree } from "./yaml-tree.js";

/**
 * Bindings (SPEC §17.4, aegis-ts): how a tool's call binds the parameters a Policy Set
 * matches on. A Policy Set speaks of `decision_axes` (capability, a path, a host and port);
 * a tool call carries arguments. A binding says, per tool, which capability the tool
 * exercises and where in the request its path or URL is, so that those axes are derived
 * from the request, never asserted by the agent.
 */

/** Whether a bound path is read or written; it decides the scope an approval grants. */
export type PathAccess = "read" | "write";

/** Where a tool's request names a path the tool touches, one entry of `paths` (SPEC §17.4). */
export interface PathBinding {
  /** The JSON Pointer (RFC 6901) into the request, as the file writes it. */
  readonly pointer: string;
  /** The pointer's reference tokens, unescaped. */
  readonly tokens: readonly string[];
  /** `read` unless the file says `write`. */
  readonly access: PathAccess;
}

/** Where a tool's request names the endpoint it reaches: the source of `decision_axes.net` (SPEC §17.4). */
export type NetBinding =
  /** A URL: the host, and the port or the scheme's default, are read from it. */
  | { readonly code: "url"; readonly pointer: string; readonly tokens: readonly string[] }
  /** Separate host and port values: `host` and `port` are the pointers' tokens, `pointers` the two as written. */
  | { readonly code: "host_port"; readonly host: readonly string[]; readonly port: readonly string[]; readonly pointers: readonly [string, string] };

/** One entry of a bindings file's `tools`: what a call to the tool it names binds (SPEC §17.4). */
export interface ToolBinding {
  /** The tool name or glob, as written. */
  readonly tool: string;
  /** `tool` compiled, when it holds a `*` or `?`; undefined for an exact name. */
  readonly glob: Glob | undefined;
  /** The `decision_axes.capability` every call to the tool is given. */
  readonly capability?: string;
  /** Where the request names the paths the tool touches; empty when the entry gives none. */
  readonly paths: readonly PathBinding[];
  /** Where the request names the endpoint the tool reaches; absent, no `net` axis is derived. */
  readonly net?: NetBinding;
}

/** A bindings file, read and checked (SPEC §17.4): what {@link deriveAxes} derives a call's axes from. */
export interface Bindings {
  /** Declared bases for relative paths: a relative path is resolved only when there is one. */
  readonly roots: readonly string[];
  /** In file order: an exact name wins over a glob, then the first glob that matches ({@link bindingFor}). */
  readonly tools: readonly ToolBinding[];
}

const TOP_KEYS = ["version", "roots", "tools"] as const;
const TOOL_KEYS = ["tool", "capability", "paths", "net"] as const;
const PATH_KEYS = ["pointer", "access"] as const;
const NET_KEYS = ["url", "host", "port"] as const;

/** What {@link tryParseBindings} answers: the bindings, or every problem of the file at once. */
export type BindingsParseResult = { readonly ok: true; readonly bindings: Bindings } | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

/** A bindings file that could not be read; the message lists every problem. */
export class BindingsParseError extends Error {
  /** Names the class in a logged or serialized error, where `instanceof` does not reach. */
  override readonly name = "BindingsParseError";
  constructor(
    /** Every problem, as values to match on; the message gives them as text. */
    readonly problems: readonly PolicyProblem[],
  ) {
    super(`bindings parse error: ${problems.map(describePolicyProblem).join("; ")}`);
  }
}

/** Read bindings, or every problem with them. Never throws for any input. */
export function tryParseBindings(text: string): BindingsParseResult {
  const read = readYaml(text);
  if (!read.ok) return read;
  const tree = read.tree;
  const top = tree.mapping(read.root, "", TOP_KEYS);
  if (top === undefined) return { ok: false, problems: tree.problems };
  const version = top.get("version");
  if (version === undefined) tree.problems.push({ code: "missing_key", path: "version" });
  else {
    const v = tree.integer(version, "version", -(2n ** 64n), 2n ** 64n);
    if (v !== undefined && v !== 1n) tree.badValue("version", `unsupported bindings version ${v} (supported: 1)`);
  }
  const roots: string[] = [];
  const rootsNode = top.get("roots");
  (rootsNode === undefined ? [] : (tree.sequence(rootsNode, "roots") ?? [])).forEach((node, i) => {
    const root = tree.string(node, `roots[${i}]`);
    if (root === undefined) return;
    if (!posix.isAbsolute(root)) tree.badValue(`roots[${i}]`, "a root is an absolute path");
    else roots.push(posix.resolve(root));
  });
  const tools: ToolBinding[] = [];
  const toolsNode = top.get("tools");
  if (toolsNode === undefined) tree.problems.push({ code: "missing_key", path: "tools" });
  (toolsNode === undefined ? [] : (tree.sequence(toolsNode, "tools") ?? [])).forEach((node, i) => {
    const binding = readTool(tree, node, `tools[${i}]`);
    if (binding !== undefined) tools.push(binding);
  });
  if (tree.problems.length > 0) return { ok: false, problems: tree.problems };
  return { ok: true, bindings: { roots, tools } };
}

/**
 * Read bindings from their text (SPEC §17.4).
 *
 * @throws BindingsParseError listing every problem.
 */
export function parseBindings(text: string): Bindings {
  const result = tryParseBindings(text);
  if (!result.ok) throw new BindingsParseError(result.problems);
  return result.bindings;
}

/**
 * Read a bindings file (UTF-8).
 *
 * @throws the file system's error when it cannot be read, InputFileError when the path is no
 * regular file (a directory, FIFO or device); BindingsParseError when it is not bindings, or
 * is over the size limit of SPEC §18.
 */
export async function loadBindings(path: string): Promise<Bindings> {
  const read = await readYamlFile(path);
  if (!read.ok) throw new BindingsParseError([read.problem]);
  const text = decodeUtf8(read.bytes);
  if (text === undefined) throw new BindingsParseError([{ code: "not_utf8" }]);
  return parseBindings(text);
}

function readTool(tree: Tree, node: YamlNode | null, path: string): ToolBinding | undefined {
  const entries = tree.mapping(node, path, TOOL_KEYS);
  if (entries === undefined) return undefined;
  const before = tree.problems.length;
  const toolNode = entries.get("tool");
  if (toolNode === undefined) tree.problems.push({ code: "missing_key", path: member(path, "tool") });
  const tool = toolNode === undefined ? undefined : tree.string(toolNode, member(path, "tool"));
  if (tool === "") tree.badValue(member(path, "tool"), "a tool name or glob is not empty");
  const capabilityNode = entries.get("capability");
  const capability = capabilityNode === undefined ? undefined : tree.string(capabilityNode, member(path, "capability"));
  const paths = readPaths(tree, entries, member(path, "paths"));
  const netNode = entries.get("net");
  const net = netNode === undefined ? undefined : readNet(tree, netNode, member(path, "net"));
  if (tree.problems.length > before || tool === undefined) return undefined;
  return {
    tool,
    glob: /[*?]/u.test(tool) ? compileGlob(tool) : undefined,
    ...(capability === undefined ? {} : { capability }),
    paths,
    ...(net === undefined ? {} : { net }),
  };
}

function readPaths(tree: Tree, entries: Entries, path: string): PathBinding[] {
  const node = entries.get("paths");
  if (node === undefined) return [];
  const out: PathBinding[] = [];
  (tree.sequence(node, path) ?? []).forEach((item, i) => {
    const at = `${path}[${i}]`;
    const fields = tree.mapping(item, at, PATH_KEYS);
    if (fields === undefined) return;
    const pointerNode = fields.get("pointer");
    if (pointerNode === undefined) tree.problems.push({ code: "missing_key", path: member(at, "pointer") });
    const pointer = pointerNode === undefined ? undefined : readPointer(tree, pointerNode, member(at, "pointer"));
    const accessNode = fields.get("access");
    let access: PathAccess = "read";
    if (accessNode !== undefined) {
      const value = tree.string(accessNode, member(at, "access"));
      if (value === "read" || value === "write") access = value;
      else if (value !== undefined) tree.badValue(member(at, "access"), "expected read or write");
    }
    if (pointer !== undefined) out.push({ ...pointer, access });
  });
  return out;
}

function readNet(tree: Tree, node: YamlNode | null, path: string): NetBinding | undefined {
  const fields = tree.mapping(node, path, NET_KEYS);
  if (fields === undefined) return undefined;
  const read = (key: string) => {
    const n = fields.get(key);
    return n === undefined ? undefined : readPointer(tree, n, member(path, key));
  };
  const url = read("url");
  const host = read("host");
  const port = read("port");
  if (fields.has("url") && (fields.has("host") || fields.has("port"))) {
    tree.problems.push({ code: "conflicting_keys", path, keys: ["url", "host and port"] });
    return undefined;
  }
  if (url !== undefined) return { code: "url", ...url };
  if (fields.has("url")) return undefined;
  if (!fields.has("host") || !fields.has("port")) {
    tree.problems.push({ code: "missing_key", path: member(path, fields.has("host") ? "port" : fields.has("port") ? "host" : "url") });
    return undefined;
  }
  if (host === undefined || port === undefined) return undefined;
  return { code: "host_port", host: host.tokens, port: port.tokens, pointers: [host.pointer, port.pointer] };
}

function readPointer(tree: Tree, node: YamlNode | null, path: string): { readonly pointer: string; readonly tokens: readonly string[] } | undefined {
  const pointer = tree.string(node, path);
  if (pointer === undefined) return undefined;
  const tokens = parsePointer(pointer);
  if (tokens === undefined) return tree.badValue(path, `not a JSON Pointer (RFC 6901): ${JSON.stringify(pointer)}`);
  return { pointer, tokens };
}

/** The binding for a tool: an exact name first, then the first glob in file order that matches. */
export function bindingFor(bindings: Bindings, toolId: string): ToolBinding | undefined {
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
export interface BoundPath {
  /** As the request gave it: what `decision_axes.fs.path_raw` records. */
  readonly raw: string;
  /** Absolute and resolved: what `decision_axes.fs.path_canonical` records and an approval's scope holds. */
  readonly resolved: string;
  /** From the binding that named it: an approval's scope keeps read and written paths apart (SPEC §17.5). */
  readonly access: PathAccess;
}

/** What {@link deriveAxes} makes of one call. */
export interface Derived {
  /** The derived axes: `capability`, and `fs` or `net` when the call named exactly one. */
  readonly axes: CallAxes;
  /** Every path the call named, resolved (for an approval's scope), when all resolved. */
  readonly paths: readonly BoundPath[];
  /** Why bound parameters gave no axis, for an operator ({@link describeUnresolved}); empty when none failed. */
  readonly unresolved: readonly UnresolvedBinding[];
}

/** What {@link deriveAxes} may learn beyond the bindings file: whether the client moved the server's roots, and the host's own reading of a path. */
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
