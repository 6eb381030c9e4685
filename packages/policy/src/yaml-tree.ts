import { CST, Composer, LineCounter, Parser, isAlias, isMap, isScalar, isSeq, visit, type Node as YamlNode, type ParsedNode } from "yaml";
import { decodeUtf8 } from "@aegis/format/internal";
import { InputFileError, readInputFile } from "@aegis/format/durable";
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
 * The bounds on a YAML file this package reads (SPEC §18). A real Policy Set is a few
 * levels deep and a few hundred rules long; the bounds are far above that and far below
 * what exhausts the process: composing YAML costs ~100x the text in memory, and recursion
 * per level of nesting.
 */
const YAML_LIMITS = {
  /** Bytes of text (of UTF-8; a string is bounded by its length, which is not more). */
  bytes: 1_048_576,
  /** Collections nested in one another, the document's own one included. */
  depth: 32,
  /** Entries of one list: a Policy Set's `rules`, bindings' `tools` or `roots`. */
  entries: 10_000,
} as const;

/**
 * The text of a YAML file, or its problem: over {@link YAML_LIMITS}`.bytes` (found before a
 * byte is read), or not UTF-8. A path that is no regular file throws {@link InputFileError};
 * one that cannot be read, the file system's error.
 */
export async function readYamlText(
  path: string,
): Promise<{ readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: PolicyProblem }> {
  let bytes;
  try {
    bytes = await readInputFile(path, YAML_LIMITS.bytes);
  } catch (error) {
    if (error instanceof InputFileError && error.fault.code === "too_large")
      return { ok: false, problem: { code: "too_large", bytes: error.fault.size, limit: error.fault.limit } };
    throw error;
  }
  const text = decodeUtf8(bytes);
  return text === undefined ? { ok: false, problem: { code: "not_utf8" } } : { ok: true, text };
}

/**
 * Parse `text` as one YAML document. YAML problems (syntax, several documents) end the
 * reading: the tree they leave is not the document the author wrote, so paths in it would
 * mislead. Aliases, anchors and tags are noted on the tree and validation goes on. The
 * bounds are checked on the parser's tokens, before anything is composed: the tokenizer
 * keeps its own stack, the composer recurses.
 */
export function readYaml(text: string): ReadYaml {
  if (text.length > YAML_LIMITS.bytes) return { ok: false, problems: [{ code: "too_large", bytes: text.length, limit: YAML_LIMITS.bytes }] };
  const lines = new LineCounter();
  const at = (offset: number) => {
    const pos = lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const tokens: Token[] = [];
  let documents = 0;
  for (const token of new Parser(lines.addNewLine).parse(text)) {
    // A second document is refused whatever it holds: stop before reading a thousand more.
    if (token.type === "document" && ++documents > 1) {
      return { ok: false, problems: [{ code: "yaml_feature", ...at(token.offset), feature: "multiple_documents" }] };
    }
    tokens.push(token);
  }
  const deep = tooDeepAt(tokens, YAML_LIMITS.depth);
  if (deep !== undefined) return { ok: false, problems: [{ code: "too_deep", ...at(deep), limit: YAML_LIMITS.depth }] };
  const docs = [...new Composer({ ...YAML_OPTIONS }).compose(tokens)];
  const problems: PolicyProblem[] = [];
  for (const doc of docs) {
    for (const issue of [...doc.errors, ...doc.warnings]) {
      problems.push({ code: "yaml_syntax", ...at(issue.pos[0]), message: issue.message });
    }
  }
  const [first] = docs;
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

  /** A sequence of at most {@link YAML_LIMITS}`.entries` items: one over is one problem, not 300,000. */
  sequence(node: YamlNode | null, path: string): readonly (YamlNode | null)[] | undefined {
    if (!isSeq(node)) return this.wrongType(path, "a sequence");
    if (node.items.length > YAML_LIMITS.entries) {
      this.problems.push({ code: "too_many", path: shown(path), count: node.items.length, limit: YAML_LIMITS.entries });
      return undefined;
    }
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

type Token = CST.Token;

/** The offset of a collection nested more than `limit` deep, if any; walked without recursion. */
function tooDeepAt(tokens: readonly Token[], limit: number): number | undefined {
  const stack: { readonly token: Token; readonly depth: number }[] = tokens.map((token) => ({ token, depth: 0 }));
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { token, depth } = next;
    if (token.type === "document") {
      if (token.value !== undefined) stack.push({ token: token.value, depth });
      continue;
    }
    if (token.type !== "block-map" && token.type !== "block-seq" && token.type !== "flow-collection") continue;
    if (depth + 1 > limit) return token.offset;
    for (const item of token.items) {
      if (item.key !== undefined && item.key !== null) stack.push({ token: item.key, depth: depth + 1 });
      if (item.value !== undefined) stack.push({ token: item.value, depth: depth + 1 });
    }
  }
  return undefined;
}
