import { posix } from "node:path";
import type { Node as YamlNode } from "yaml";
import { compileGlob, type Glob } from "./glob.js";
import { parsePointer } from "./pointer.js";
import { describePolicyProblem, type PolicyProblem } from "./problems.js";
import { member, readYaml, readYamlText, type Entries, type Tree } from "./yaml-tree.js";
import { FaultError } from "@aegis/format";

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

/** A bindings file, read and checked (SPEC §17.4): what `deriveAxes` derives a call's axes from. */
export interface Bindings {
  /** Declared bases for relative paths: a relative path is resolved only when there is one. */
  readonly roots: readonly string[];
  /** In file order: an exact name wins over a glob, then the first glob that matches (`bindingFor`). */
  readonly tools: readonly ToolBinding[];
}

const TOP_KEYS = ["version", "roots", "tools"] as const;
const TOOL_KEYS = ["tool", "capability", "paths", "net"] as const;
const PATH_KEYS = ["pointer", "access"] as const;
const NET_KEYS = ["url", "host", "port"] as const;

/** What `tryParseBindings` answers: the bindings, or every problem of the file at once. */
export type BindingsParseResult = { readonly ok: true; readonly bindings: Bindings } | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

/** A bindings file that could not be read; the message lists every problem. */
export class BindingsParseError extends FaultError<readonly PolicyProblem[]> {
  constructor(
    /** Every problem, as values to match on; the message gives them as text. */
    readonly problems: readonly PolicyProblem[],
  ) {
    super("BindingsParseError", problems, (all) => `bindings parse error: ${all.map(describePolicyProblem).join("; ")}`);
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
  const read = await readYamlText(path);
  if (!read.ok) throw new BindingsParseError([read.problem]);
  return parseBindings(read.text);
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
