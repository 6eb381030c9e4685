import { isMap, isScalar, type Node as YamlNode } from "yaml";
import { compileGlob } from "./glob.js";
import {
  sealPolicySet,
  specificityOf,
  type ArgumentMatcher,
  type ArgumentTest,
  type ArgumentValue,
  type DefaultAction,
  type Limits,
  type NetMatcher,
  type PathMatcher,
  type PolicySet,
  type PolicyVersion,
  type Rule,
  type RuleAction,
  type RuleKind,
  type RuleMatchers,
} from "./model.js";
import { parsePointer } from "./pointer.js";
import { PolicyParseError, type PolicyProblem } from "./problems.js";
import { policySetHashOf } from "./projection.js";
import { member, readYaml, readYamlText, type Entries, type Tree } from "./yaml-tree.js";

/**
 * Policy Set files (SPEC §15.1, §15.2): the reference's version 1, exactly, and the aegis-ts
 * version 2. Defaults follow the reference's reader: no `version` is version 1, no
 * `default` is allow, no `rules` is an empty list, no `priority` is 0.
 */

const I32_MIN = -(2n ** 31n);
const I32_MAX = 2n ** 31n - 1n;
const U32_MAX = 2n ** 32n - 1n;
const U64_MAX = 2n ** 64n - 1n;
const PORT_MAX = 65535n;

const TOP_KEYS = ["version", "default", "rules"] as const;
const V1_RULE_KEYS = ["id", "action", "tool", "capability", "role", "priority", "reason", "rate", "limits"] as const;
const V2_RULE_KEYS = ["session", "fs", "net", "args"] as const;
const ACTIONS: readonly RuleKind[] = ["allow", "deny", "rate_limit", "pending_approval"];
const LIMIT_KEYS = ["max_memory_bytes", "max_wall_ms", "max_output_bytes"] as const;
const FS_KEYS = ["path", "path_prefix", "path_glob"] as const;
const NET_KEYS = ["host", "host_suffix", "ports", "port_range"] as const;
const ARG_TESTS = ["exact", "prefix", "exists"] as const;

/** What `tryParsePolicySet` answers: the set, or every problem of the file at once (SPEC §15.1). */
export type PolicyParseResult = { readonly ok: true; readonly set: PolicySet } | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

/** Read a Policy Set, or every problem with it (SPEC §15.1). Never throws for any input. */
export function tryParsePolicySet(text: string): PolicyParseResult {
  const read = readYaml(text);
  if (!read.ok) return read;
  const tree = read.tree;
  const top = tree.mapping(read.root, "", TOP_KEYS);
  if (top === undefined) return { ok: false, problems: tree.problems };

  const version = readVersion(tree, top);
  const defaultAction = readDefault(tree, top);
  const rules: Rule[] = [];
  const firstSeen = new Map<string, string>();
  const rulesNode = top.get("rules");
  const items = rulesNode === undefined ? [] : (tree.sequence(rulesNode, "rules") ?? []);
  items.forEach((node, i) => {
    const path = `rules[${i}]`;
    const rule = readRule(tree, node, path, version);
    const id = rule?.id ?? idOf(node);
    if (id !== undefined) {
      const first = firstSeen.get(id);
      if (first !== undefined) tree.problems.push({ code: "duplicate_rule_id", path: `${path}.id`, id, first });
      else firstSeen.set(id, path);
    }
    if (rule !== undefined) rules.push(rule);
  });

  if (tree.problems.length > 0 || version.supported === undefined) return { ok: false, problems: tree.problems };
  const unsealed = { version: version.supported, default: defaultAction, rules };
  return { ok: true, set: sealPolicySet({ ...unsealed, hash: policySetHashOf(unsealed) }) };
}

/**
 * Read a Policy Set from its text.
 *
 * @throws PolicyParseError listing every problem, its message beginning `policy parse error:`.
 * @example
 * ```ts
 * const set = parsePolicySet("version: 1\ndefault: deny\nrules: []\n");
 * ```
 */
export function parsePolicySet(text: string): PolicySet {
  const result = tryParsePolicySet(text);
  if (!result.ok) throw new PolicyParseError(result.problems);
  return result.set;
}

/**
 * Read a Policy Set file. The bytes must be UTF-8.
 *
 * @throws the file system's error when the file cannot be read, InputFileError when the path is
 * no regular file (a directory, FIFO or device); PolicyParseError when it is
 * not a Policy Set.
 */
export async function loadPolicySet(path: string): Promise<PolicySet> {
  const read = await readYamlText(path);
  if (!read.ok) throw new PolicyParseError([read.problem]);
  return parsePolicySet(read.text);
}

/**
 * `supported` is the version when this build reads it. An unsupported or unreadable
 * version is reported, and the rest of the file is still checked, against version 2's
 * keys, so that one reading lists every problem.
 */
function readVersion(tree: Tree, top: Entries): { readonly supported: PolicyVersion | undefined; readonly rules: PolicyVersion } {
  const node = top.get("version");
  if (node === undefined) return { supported: 1, rules: 1 };
  // Any integer that is not 1 or 2 is a version this build does not read, however large.
  const value = isScalar(node) && typeof node.value === "bigint" ? node.value : tree.integer(node, "version", 0n, 0n);
  if (value === 1n) return { supported: 1, rules: 1 };
  if (value === 2n) return { supported: 2, rules: 2 };
  if (value !== undefined) tree.problems.push({ code: "unsupported_version", path: "version", found: value.toString() });
  return { supported: undefined, rules: 2 };
}

function readDefault(tree: Tree, top: Entries): DefaultAction {
  const node = top.get("default");
  if (node === undefined) return "allow";
  const value = tree.string(node, "default");
  if (value === "allow" || value === "deny") return value;
  if (value !== undefined) tree.badValue("default", "expected allow or deny");
  return "allow";
}

/** The id of a rule that did not validate, so duplicates are still found. */
function idOf(node: YamlNode | null): string | undefined {
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    if (isScalar(pair.key) && pair.key.value === "id" && isScalar(pair.value) && typeof pair.value.value === "string") {
      return pair.value.value;
    }
  }
  return undefined;
}

function readRule(tree: Tree, node: YamlNode | null, path: string, version: { readonly rules: PolicyVersion }): Rule | undefined {
  const entries = tree.mapping(node, path, [...V1_RULE_KEYS, ...V2_RULE_KEYS]);
  if (entries === undefined) return undefined;
  const before = tree.problems.length;
  if (version.rules === 1) {
    for (const key of V2_RULE_KEYS) {
      if (entries.has(key)) tree.problems.push({ code: "version_2_only", path: member(path, key) });
    }
  }
  const required = (key: string): YamlNode | null | undefined => {
    if (!entries.has(key)) tree.problems.push({ code: "missing_key", path: member(path, key) });
    return entries.get(key);
  };
  const optional = <T>(key: string, read: (node: YamlNode | null, at: string) => T | undefined): T | undefined => {
    const value = entries.get(key);
    return value === undefined ? undefined : read(value, member(path, key));
  };

  const idNode = required("id");
  const id = idNode === undefined ? undefined : tree.string(idNode, member(path, "id"));
  const actionNode = required("action");
  const kind = actionNode === undefined ? undefined : readAction(tree, actionNode, member(path, "action"));

  const match: RuleMatchers = compact({
    tool: optional("tool", (n, at) => axis(tree, n, at)),
    capability: optional("capability", (n, at) => axis(tree, n, at)),
    role: optional("role", (n, at) => axis(tree, n, at)),
    session: optional("session", (n, at) => axis(tree, n, at)),
    fs: optional("fs", (n, at) => readFs(tree, n, at, id)),
    net: optional("net", (n, at) => readNet(tree, n, at)),
    args: optional("args", (n, at) => readArgs(tree, n, at)),
  });
  const priority = optional("priority", (n, at) => tree.integer(n, at, I32_MIN, I32_MAX)) ?? 0n;
  const reason = optional("reason", (n, at) => tree.string(n, at));
  const limits = optional("limits", (n, at) => readLimits(tree, n, at));
  const rateNode = entries.get("rate");

  let action: RuleAction | undefined;
  const limitsHere = limits !== undefined && Object.keys(limits).length > 0 ? limits : undefined;
  switch (kind) {
    case "rate_limit": {
      if (rateNode === undefined) tree.problems.push({ code: "rate_required", path: member(path, "rate") });
      const rate = rateNode === undefined ? undefined : readRate(tree, rateNode, member(path, "rate"));
      if (rate !== undefined) action = compact({ code: kind, rate, limits: limitsHere });
      break;
    }
    case "allow":
    case "deny":
    case "pending_approval":
      if (rateNode !== undefined) tree.problems.push({ code: "rate_not_allowed", path: member(path, "rate") });
      if (kind !== "allow" && limitsHere !== undefined) tree.problems.push({ code: "limits_not_allowed", path: member(path, "limits") });
      action = kind === "allow" ? compact({ code: kind, limits: limitsHere }) : { code: kind };
      break;
    case undefined:
      break;
  }

  if (tree.problems.length > before || id === undefined || action === undefined) return undefined;
  return compact({ id, action, match, priority: Number(priority), reason, specificity: specificityOf(match) });
}

function readAction(tree: Tree, node: YamlNode | null, path: string): RuleKind | undefined {
  const value = tree.string(node, path);
  if (value === undefined) return undefined;
  const kind = ACTIONS.find((a) => a === value);
  return kind ?? tree.badValue(path, `expected one of ${ACTIONS.join(", ")}`);
}

/** An exact-value matcher; `*` is the wildcard and reads as no matcher at all (SPEC §15.3). */
function axis(tree: Tree, node: YamlNode | null, path: string): string | undefined {
  const value = tree.string(node, path);
  return value === "*" ? undefined : value;
}

function readRate(tree: Tree, node: YamlNode | null, path: string): { readonly max: number; readonly per_seconds: bigint } | undefined {
  const entries = tree.mapping(node, path, ["max", "per_seconds"]);
  if (entries === undefined) return undefined;
  const field = (key: string, max: bigint): bigint | undefined => {
    const value = entries.get(key);
    if (value === undefined) {
      tree.problems.push({ code: "missing_key", path: member(path, key) });
      return undefined;
    }
    return tree.integer(value, member(path, key), 1n, max);
  };
  const max = field("max", U32_MAX);
  const perSeconds = field("per_seconds", U64_MAX);
  return max === undefined || perSeconds === undefined ? undefined : { max: Number(max), per_seconds: perSeconds };
}

function readLimits(tree: Tree, node: YamlNode | null, path: string): Limits | undefined {
  const entries = tree.mapping(node, path, LIMIT_KEYS);
  if (entries === undefined) return undefined;
  const out: { -readonly [K in keyof Limits]: bigint } = {};
  for (const key of LIMIT_KEYS) {
    const value = entries.get(key);
    if (value === undefined) continue;
    const n = tree.integer(value, member(path, key), 0n, U64_MAX);
    if (n !== undefined) out[key] = n;
  }
  return out;
}

/** Exactly one of the keys in `keys` that `entries` holds, or a problem. */
function oneOf<K extends string>(tree: Tree, entries: Entries, keys: readonly K[], path: string, required: boolean): K | undefined {
  const present = keys.filter((k) => entries.has(k));
  if (present.length > 1) {
    tree.problems.push({ code: "conflicting_keys", path, keys: present });
    return undefined;
  }
  const [only] = present;
  if (only === undefined && required) tree.badValue(path, `give one of ${keys.join(", ")}`);
  return only;
}

function readFs(tree: Tree, node: YamlNode | null, path: string, ruleId: string | undefined): PathMatcher | undefined {
  const entries = tree.mapping(node, path, FS_KEYS);
  if (entries === undefined) return undefined;
  const key = oneOf(tree, entries, FS_KEYS, path, true);
  if (key === undefined) return undefined;
  const text = tree.string(entries.get(key) ?? null, member(path, key));
  if (text === undefined) return undefined;
  // A call's path_canonical is absolute: a matcher that cannot begin with "/" would never
  // match, and a rule that silently never matches is worse than a refused file (SPEC §15.2).
  if (!(text.startsWith("/") || (key === "path_glob" && text.startsWith("*")))) {
    const rule = ruleId === undefined ? "the rule" : `rule ${JSON.stringify(ruleId)}`;
    const begin = key === "path_glob" ? "/ or *" : "/";
    return tree.badValue(
      member(path, key),
      `${JSON.stringify(text)} can never match a call's path, which is absolute, so ${rule} never would; begin it with ${begin}`,
    );
  }
  switch (key) {
    case "path":
      return { code: "exact", path: text };
    case "path_prefix":
      return { code: "prefix", prefix: text };
    case "path_glob":
      return { code: "glob", glob: text, matcher: compileGlob(text) };
  }
}

function readNet(tree: Tree, node: YamlNode | null, path: string): NetMatcher | undefined {
  const entries = tree.mapping(node, path, NET_KEYS);
  if (entries === undefined) return undefined;
  if (!NET_KEYS.some((k) => entries.has(k))) return tree.badValue(path, `give at least one of ${NET_KEYS.join(", ")}`);
  const before = tree.problems.length;
  const hostKey = oneOf(tree, entries, ["host", "host_suffix"] as const, path, false);
  const portKey = oneOf(tree, entries, ["ports", "port_range"] as const, path, false);
  const hostText = hostKey === undefined ? undefined : tree.string(entries.get(hostKey) ?? null, member(path, hostKey));
  const host =
    hostKey === undefined || hostText === undefined
      ? undefined
      : hostKey === "host"
        ? ({ code: "exact", host: hostText } as const)
        : ({ code: "suffix", suffix: hostText } as const);
  let port: NetMatcher["port"];
  if (portKey === "ports") {
    const at = member(path, "ports");
    const items = tree.sequence(entries.get("ports") ?? null, at);
    if (items !== undefined && items.length === 0) tree.badValue(at, "expected at least one port");
    const ports = (items ?? []).map((item, i) => tree.integer(item, `${at}[${i}]`, 0n, PORT_MAX));
    if (items !== undefined && ports.every((p) => p !== undefined)) port = { code: "list", ports: ports.map(Number) };
  } else if (portKey === "port_range") {
    const at = member(path, "port_range");
    const range = tree.mapping(entries.get("port_range") ?? null, at, ["min", "max"]);
    if (range !== undefined) {
      const end = (key: "min" | "max") => {
        const value = range.get(key);
        if (value === undefined) {
          tree.problems.push({ code: "missing_key", path: member(at, key) });
          return undefined;
        }
        return tree.integer(value, member(at, key), 0n, PORT_MAX);
      };
      const min = end("min");
      const max = end("max");
      if (min !== undefined && max !== undefined) {
        if (min > max) tree.badValue(at, "min is above max");
        else port = { code: "range", min: Number(min), max: Number(max) };
      }
    }
  }
  if (tree.problems.length > before) return undefined;
  return compact({ host, port });
}

function readArgs(tree: Tree, node: YamlNode | null, path: string): readonly ArgumentMatcher[] | undefined {
  const items = tree.sequence(node, path);
  if (items === undefined) return undefined;
  if (items.length === 0) return tree.badValue(path, "expected at least one argument matcher");
  const before = tree.problems.length;
  const matchers = items.map((item, i) => readArg(tree, item, `${path}[${i}]`));
  const all = matchers.filter((m): m is ArgumentMatcher => m !== undefined);
  return tree.problems.length > before || all.length !== matchers.length ? undefined : all;
}

function readArg(tree: Tree, node: YamlNode | null, path: string): ArgumentMatcher | undefined {
  const entries = tree.mapping(node, path, ["pointer", ...ARG_TESTS]);
  if (entries === undefined) return undefined;
  const pointerNode = entries.get("pointer");
  if (pointerNode === undefined) tree.problems.push({ code: "missing_key", path: member(path, "pointer") });
  const pointer = pointerNode === undefined ? undefined : tree.string(pointerNode, member(path, "pointer"));
  const tokens = pointer === undefined ? undefined : parsePointer(pointer);
  if (pointer !== undefined && tokens === undefined) {
    tree.badValue(member(path, "pointer"), "not a JSON Pointer (RFC 6901): empty, or `/` tokens with `~` only as `~0` or `~1`");
  }
  const key = oneOf(tree, entries, ARG_TESTS, path, true);
  let test: ArgumentTest | undefined;
  if (key !== undefined) {
    const value = entries.get(key) ?? null;
    const at = member(path, key);
    switch (key) {
      case "exact": {
        const scalar = readArgValue(tree, value, at);
        if (scalar !== undefined) test = { code: "exact", value: scalar };
        break;
      }
      case "prefix": {
        const prefix = tree.string(value, at);
        if (prefix !== undefined) test = { code: "prefix", prefix };
        break;
      }
      case "exists": {
        const exists = tree.boolean(value, at);
        if (exists !== undefined) test = { code: "exists", exists };
        break;
      }
    }
  }
  return pointer === undefined || tokens === undefined || test === undefined ? undefined : { pointer, tokens, test };
}

function readArgValue(tree: Tree, node: YamlNode | null, path: string): ArgumentValue | undefined {
  const value: unknown = isScalar(node) ? node.value : undefined;
  if (typeof value === "string") return { code: "string", value };
  if (typeof value === "bigint") return { code: "integer", value };
  if (typeof value === "boolean") return { code: "boolean", value };
  return tree.wrongType(path, "a string, an integer, or true or false");
}

/** Members that may be undefined become optional members that are absent instead. */
type Compact<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Drop members whose value is undefined: absent, never undefined (exactOptionalPropertyTypes). */
function compact<T extends object>(record: T): Compact<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (v !== undefined) out[k] = v;
  return out as Compact<T>;
}
