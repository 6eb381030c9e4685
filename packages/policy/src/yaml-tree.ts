import { LineCounter, isAlias, isMap, isScalar, isSeq, parseAllDocuments, visit, type Node as YamlNode, type ParsedNode } from "yaml";
import type { PolicyProblem } from "./problems.js";

/**
 * Reading a Policy Set's YAML into a tree, strictly (ADR 0005, SPEC §15.1): YAML 1.2 core
 * schema, one document, duplicate keys refused, no aliases, anchors or explicit tags, and
 * every parser warning treated as an error. Integers are read as bigints, so nothing is
 * rounded before we judge its range. Validation of the tree is the caller's ({@link Tree}).
 */
const YAML_OPTIONS = {
  schema: "core",
  uniqueKeys: true,
  merge: false,
  intAsBigInt: true,
  prettyErrors: false,
  strict: true,
} as const;

export type ReadYaml =
  { readonly ok: true; readonly root: ParsedNode | null; readonly tree: Tree } | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

/**
 * Parse `text` as one YAML document. YAML problems (syntax, several documents) end the
 * reading: the tree they leave is not the document the author wrote, so paths in it would
 * mislead. Aliases, anchors and tags are noted on the tree and validation goes on.
 */
export function readYaml(text: string): ReadYaml {
  const lines = new LineCounter();
  const parsed = parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter: lines });
  const docs = Array.isArray(parsed) ? parsed : [];
  const at = (offset: number) => {
    const pos = lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const problems: PolicyProblem[] = [];
  for (const doc of docs) {
    for (const issue of [...doc.errors, ...doc.warnings]) {
      problems.push({ code: "yaml_syntax", ...at(issue.pos[0]), message: issue.message });
    }
  }
  const [first, second] = docs;
  if (second !== undefined) problems.push({ code: "yaml_feature", ...at(second.range[0]), feature: "multiple_documents" });
  // A `%YAML 1.1` directive would ask for other scalar meanings (`on`, `017`) than the ones read here.
  if (first?.directives?.yaml.explicit === true && first.directives.yaml.version !== "1.2") {
    problems.push({ code: "yaml_feature", ...at(0), feature: "yaml_version" });
  }
  if (problems.length > 0) return { ok: false, problems };
  if (first === undefined) return { ok: false, problems: [{ code: "empty_document" }] };

  const tree = new Tree();
  visit(first, {
    Node(_key, node) {
      const offset = node.range?.[0] ?? 0;
      if (isAlias(node)) tree.problems.push({ code: "yaml_feature", ...at(offset), feature: "alias" });
      else {
        if (node.anchor !== undefined) tree.problems.push({ code: "yaml_feature", ...at(offset), feature: "anchor" });
        if (node.tag !== undefined) tree.problems.push({ code: "yaml_feature", ...at(offset), feature: "tag" });
      }
    },
  });
  return { ok: true, root: first.contents, tree };
}

/** A mapping's entries by key, in file order. */
export type Entries = ReadonlyMap<string, YamlNode | null>;

/** Path of a member: `rules[0]` + `rate` is `rules[0].rate`; the root's members are bare. */
export function member(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function shown(path: string): string {
  return path === "" ? "(root)" : path;
}

/**
 * Typed access to the tree, gathering every problem instead of stopping at the first.
 * Each accessor returns undefined when the value does not fit, after noting why.
 */
export class Tree {
  readonly problems: PolicyProblem[] = [];

  wrongType(path: string, expected: string): undefined {
    this.problems.push({ code: "wrong_type", path: shown(path), expected });
    return undefined;
  }

  badValue(path: string, message: string): undefined {
    this.problems.push({ code: "bad_value", path: shown(path), message });
    return undefined;
  }

  /**
   * A mapping whose keys are all strings; keys not in `allowed` are reported (one problem
   * each, at the key's path) and left out.
   */
  mapping(node: YamlNode | null, path: string, allowed: readonly string[]): Entries | undefined {
    if (!isMap(node)) return this.wrongType(path, "a mapping");
    const entries = new Map<string, YamlNode | null>();
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key.value : undefined;
      const name = typeof key === "string" ? key : isScalar(pair.key) ? String(key) : "?";
      if (typeof key !== "string" || !allowed.includes(key)) {
        this.problems.push({ code: "unknown_key", path: member(path, name) });
        continue;
      }
      entries.set(key, isNodeValue(pair.value) ? pair.value : null);
    }
    return entries;
  }

  sequence(node: YamlNode | null, path: string): readonly (YamlNode | null)[] | undefined {
    if (!isSeq(node)) return this.wrongType(path, "a sequence");
    return node.items.map((item) => (isNodeValue(item) ? item : null));
  }

  string(node: YamlNode | null, path: string): string | undefined {
    if (!isScalar(node) || typeof node.value !== "string") return this.wrongType(path, "a string");
    // A lone surrogate (`"\ud800"`) is no Unicode text, and has no canonical form to hash.
    if (!node.value.isWellFormed()) return this.badValue(path, "not well-formed Unicode (a lone surrogate)");
    return node.value;
  }

  boolean(node: YamlNode | null, path: string): boolean | undefined {
    if (isScalar(node) && typeof node.value === "boolean") return node.value;
    return this.wrongType(path, "true or false");
  }

  /** An integer in [min, max]. A float, even `1.0`, is not an integer. */
  integer(node: YamlNode | null, path: string, min: bigint, max: bigint): bigint | undefined {
    if (!isScalar(node) || typeof node.value !== "bigint") return this.wrongType(path, "an integer");
    if (node.value < min || node.value > max) return this.badValue(path, `expected an integer from ${min} to ${max}`);
    return node.value;
  }
}

function isNodeValue(value: unknown): value is YamlNode {
  return isScalar(value) || isMap(value) || isSeq(value) || isAlias(value);
}
