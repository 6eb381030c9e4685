import { match } from "ts-pattern";
import { OutOfSpaceNumber, PARSED_OBJECT_PROTOTYPE, type JsonValue } from "./json.js";
import { unmatched } from "../unreachable.js";
import { FaultError } from "../fault-error.js";

/**
 * The canonical form (SPEC §3): RFC 8785 (JCS) over the restricted value space. Every
 * hash and signature in the format is taken over these bytes.
 *
 * JavaScript's own rules are JCS's rules for everything the value space admits: the
 * default `Array.prototype.sort` orders keys by UTF-16 code unit (RFC 8785 §3.2.3), and
 * `JSON.stringify` on a well-formed string escapes exactly `"`, `\` and the C0 controls,
 * with the short forms where they exist and lowercase `\u00xx` otherwise (§3.2.2.2).
 * Numbers are the part JCS implementations disagree on, so the value space has only
 * non-negative integers below 2^53, and those print the same everywhere.
 */

/** The largest integer in the value space, 2^53 − 1 (SPEC §3.2): one at or above 2^53 is `integer_too_large`. */
const MAX_SAFE_INTEGER = 9007199254740991;

/**
 * Why a value has no canonical form (SPEC §3.2). `path` names the first such value met in
 * canonical order, `$` for the whole value (e.g. `$.decision_axes.fs.path_raw`);
 * `describeCanonicalFault` gives the text.
 */
export type CanonicalFault =
  /** A number the row writes as a float (SPEC §3.3): with a fraction or an exponent, `-0`, or an integer beyond 64 bits. */
  | { readonly code: "float_not_allowed"; readonly path: string }
  /** An integer at or above 2^53; `value` is it in decimal. */
  | { readonly code: "integer_too_large"; readonly path: string; readonly value: string }
  /** A negative integer. */
  | { readonly code: "negative_integer"; readonly path: string }
  /** A `null`: an absent member is omitted, never null. */
  | { readonly code: "null_not_allowed"; readonly path: string }
  /** aegis-ts: a value JSON cannot carry at all (undefined, a function, a lone surrogate). */
  | { readonly code: "not_json"; readonly path: string; readonly what: string };

/** The reference's wording, so a `malformed_line` detail reads the same in both. */
export function describeCanonicalFault(fault: CanonicalFault): string {
  return match(fault)
    .with({ code: "float_not_allowed" }, (f) => `floating-point value at ${f.path} is outside the JCS value space`)
    .with({ code: "integer_too_large" }, (f) => `integer ${f.value} at ${f.path} is at or above 2^53 (max ${MAX_SAFE_INTEGER})`)
    .with({ code: "negative_integer" }, (f) => `negative integer at ${f.path} is outside the JCS value space`)
    .with({ code: "null_not_allowed" }, (f) => `null at ${f.path}; absent fields must be omitted, never null`)
    .with({ code: "not_json" }, (f) => `not serializable as JSON: ${f.what} at ${f.path}`)
    .exhaustive(unmatched);
}

/**
 * Thrown by `canonicalize` for a value outside the value space (SPEC §3.2);
 * `tryCanonicalize` returns the fault instead.
 */
export class CanonicalFormError extends FaultError<CanonicalFault> {
  constructor(fault: CanonicalFault) {
    super("CanonicalFormError", fault, describeCanonicalFault);
  }
}

/**
 * The canonical form of `value`, or a thrown `CanonicalFormError` naming the path of
 * the first value outside the value space (in canonical member order).
 *
 * `omitTopLevel` drops one top-level member: the signing input is the canonical form
 * with `signature` omitted (SPEC §4), and leaving it out here avoids copying the Line.
 *
 * @throws CanonicalFormError whose `fault.code` is `float_not_allowed`, `integer_too_large`,
 * `negative_integer`, `null_not_allowed` or `not_json`.
 */
export function canonicalize(value: unknown, omitTopLevel?: string): string {
  if (isObject(value)) return joinMembers(members(value, "$", omitTopLevel));
  return write(value, []);
}

/** Like `canonicalize`, returning the fault instead of throwing. */
export function tryCanonicalize(
  value: JsonValue,
  omitTopLevel?: string,
): { readonly ok: true; readonly text: string } | { readonly ok: false; readonly fault: CanonicalFault } {
  try {
    return { ok: true, text: canonicalize(value, omitTopLevel) };
  } catch (error) {
    if (error instanceof CanonicalFormError) return { ok: false, fault: error.fault };
    throw error;
  }
}

/**
 * The path of the value being written, as segments (`.key`, `[i]`), kept as a stack and
 * joined only when a fault has to name it: building a path string per member would cost
 * more than writing the member.
 */
type PathStack = string[];

// Stryker disable next-line StringLiteral: equivalent E10
function pathOf(stack: PathStack, root = "$"): string {
  return root + stack.join("");
}

function fail(fault: CanonicalFault): never {
  throw new CanonicalFormError(fault);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof OutOfSpaceNumber) && isPlainObject(value);
}

function write(value: unknown, path: PathStack, root = "$"): string {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) fail({ code: "not_json", path: pathOf(path, root), what: "a string with a lone surrogate" });
      return JSON.stringify(value);
    case "number":
      if (Number.isInteger(value) && value >= 0 && value <= MAX_SAFE_INTEGER && !Object.is(value, -0)) return String(value);
      return writeNumber(value, pathOf(path, root));
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) fail({ code: "null_not_allowed", path: pathOf(path, root) });
      if (value instanceof OutOfSpaceNumber) {
        const at = pathOf(path, root);
        return value.kind === "float"
          ? fail({ code: "float_not_allowed", path: at })
          : value.kind === "negative"
            ? fail({ code: "negative_integer", path: at })
            : fail({ code: "integer_too_large", path: at, value: value.lexeme });
      }
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          path.push(`[${i}]`);
          out += write(value[i], path, root);
          path.pop();
        }
        return out + "]";
      }
      if (!isPlainObject(value)) fail({ code: "not_json", path: pathOf(path, root), what: "a non-plain object" });
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object).sort();
      let out = "{";
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        if (!key.isWellFormed()) fail({ code: "not_json", path: pathOf(path, root), what: "a key with a lone surrogate" });
        if (i > 0) out += ",";
        path.push(`.${key}`);
        out += `${JSON.stringify(key)}:${write(object[key], path, root)}`;
        path.pop();
      }
      return out + "}";
    }
    // Each named: a `default` would stand in for a kind `typeof` gains (ADR 0029).
    case "bigint":
    case "function":
    case "symbol":
    case "undefined":
      return fail({ code: "not_json", path: pathOf(path, root), what: `a value of type ${typeof value}` });
  }
}

/**
 * A top-level object's canonical members, sorted, each as its `"key":value` text. A Line's
 * signing input and its full form differ by one member (SPEC §4), so both are joined from
 * one serialization.
 */
export type CanonicalMembers = readonly (readonly [key: string, text: string])[];

export function members(object: Record<string, unknown>, root = "$", omit?: string): CanonicalMembers {
  const keys = Object.keys(object).sort();
  const out: (readonly [string, string])[] = [];
  const path: PathStack = [];
  for (const key of keys) {
    if (key === omit) continue;
    if (!key.isWellFormed()) fail({ code: "not_json", path: root, what: "a key with a lone surrogate" });
    path.push(`.${key}`);
    out.push([key, `${JSON.stringify(key)}:${write(object[key], path, root)}`]);
    path.pop();
  }
  return out;
}

/** Join members into an object's canonical text, leaving out the member named `omit`. */
export function joinMembers(sorted: CanonicalMembers, omit?: string): string {
  let out = "{";
  let first = true;
  for (const [key, text] of sorted) {
    if (key === omit) continue;
    if (!first) out += ",";
    first = false;
    out += text;
  }
  return out + "}";
}

/** Insert one member into sorted members, keeping UTF-16 order. */
export function withMember(sorted: CanonicalMembers, key: string, value: unknown): CanonicalMembers {
  const member = [key, `${JSON.stringify(key)}:${write(value, [`.${key}`])}`] as const;
  // Stryker disable next-line EqualityOperator: equivalent E12
  const at = sorted.findIndex(([k]) => k > key);
  return at === -1 ? [...sorted, member] : [...sorted.slice(0, at), member, ...sorted.slice(at)];
}

/** Why a number that `write` did not print is outside the value space: it never prints one. */
function writeNumber(n: number, path: string): never {
  if (!Number.isInteger(n) || Object.is(n, -0)) fail({ code: "float_not_allowed", path });
  // Stryker disable next-line EqualityOperator: equivalent E11
  if (n < 0) fail({ code: "negative_integer", path });
  return fail({ code: "integer_too_large", path, value: BigInt(n).toString() });
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || proto === PARSED_OBJECT_PROTOTYPE;
}
