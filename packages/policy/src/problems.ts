import { unmatched } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { FaultError } from "@aegis/format";

/**
 * Why a Policy Set was refused (SPEC §15.1). Every problem in a file is gathered and
 * reported together, each with the path of the value at fault, written as in the file:
 * `rules[2].rate`, `rules[0].net.port_range.min`; `(root)` for the document itself. YAML
 * problems carry a line and column instead: they are found before there is a tree to name
 * paths in.
 */
export type PolicyProblem =
  | { readonly code: "not_utf8" }
  | { readonly code: "yaml_syntax"; readonly line: number; readonly column: number; readonly message: string }
  | {
      readonly code: "yaml_feature";
      readonly line: number;
      readonly column: number;
      readonly feature: "alias" | "anchor" | "tag" | "multiple_documents" | "yaml_version";
    }
  | { readonly code: "empty_document" }
  | { readonly code: "too_large"; readonly bytes: number; readonly limit: number }
  | { readonly code: "too_deep"; readonly line: number; readonly column: number; readonly limit: number }
  | { readonly code: "too_many"; readonly path: string; readonly count: number; readonly limit: number }
  | { readonly code: "unknown_key"; readonly path: string }
  | { readonly code: "missing_key"; readonly path: string }
  | { readonly code: "wrong_type"; readonly path: string; readonly expected: string }
  | { readonly code: "bad_value"; readonly path: string; readonly message: string }
  | { readonly code: "unsupported_version"; readonly path: string; readonly found: string }
  | { readonly code: "version_2_only"; readonly path: string }
  | { readonly code: "duplicate_rule_id"; readonly path: string; readonly id: string; readonly first: string }
  | { readonly code: "rate_not_allowed"; readonly path: string }
  | { readonly code: "rate_required"; readonly path: string }
  | { readonly code: "limits_not_allowed"; readonly path: string }
  | { readonly code: "conflicting_keys"; readonly path: string; readonly keys: readonly string[] };

const FEATURE_TEXT = {
  alias: "aliases are not allowed",
  anchor: "anchors are not allowed",
  tag: "explicit tags are not allowed",
  multiple_documents: "a Policy Set is one YAML document",
  yaml_version: "a Policy Set is read as YAML 1.2; a %YAML directive for another version is refused",
} as const;

/** One problem as a line of text: `<path>: <what is wrong>`. */
export function describePolicyProblem(problem: PolicyProblem): string {
  return match(problem)
    .with({ code: "not_utf8" }, () => "(file): not valid UTF-8")
    .with({ code: "yaml_syntax" }, (p) => `line ${p.line}, column ${p.column}: ${p.message}`)
    .with({ code: "yaml_feature" }, (p) => `line ${p.line}, column ${p.column}: ${FEATURE_TEXT[p.feature]}`)
    .with({ code: "empty_document" }, () => "(root): the document is empty")
    .with({ code: "too_large" }, (p) => `(file): ${p.bytes} bytes, over the limit of ${p.limit} bytes (SPEC §18)`)
    .with({ code: "too_deep" }, (p) => `line ${p.line}, column ${p.column}: nested more than ${p.limit} levels deep, the limit (SPEC §18)`)
    .with({ code: "too_many" }, (p) => `${p.path}: ${p.count} entries, over the limit of ${p.limit} (SPEC §18)`)
    .with({ code: "unknown_key" }, (p) => `${p.path}: unknown key`)
    .with({ code: "missing_key" }, (p) => `${p.path}: required`)
    .with({ code: "wrong_type" }, (p) => `${p.path}: expected ${p.expected}`)
    .with({ code: "bad_value" }, (p) => `${p.path}: ${p.message}`)
    .with({ code: "unsupported_version" }, (p) => `${p.path}: unsupported policy version ${p.found} (supported: 1, 2)`)
    .with({ code: "version_2_only" }, (p) => `${p.path}: only allowed in a version 2 Policy Set`)
    .with({ code: "duplicate_rule_id" }, (p) => `${p.path}: duplicate rule id \`${p.id}\` (first at ${p.first})`)
    .with({ code: "rate_not_allowed" }, (p) => `${p.path}: only allowed when action is rate_limit`)
    .with({ code: "rate_required" }, (p) => `${p.path}: required when action is rate_limit`)
    .with({ code: "limits_not_allowed" }, (p) => `${p.path}: only allowed when action is allow or rate_limit`)
    .with({ code: "conflicting_keys" }, (p) => `${p.path}: give only one of ${p.keys.join(", ")}`)
    .exhaustive(unmatched);
}

/**
 * A Policy Set that could not be read. The message is one line, beginning
 * `policy parse error:`, that lists every problem; `problems` holds them as values.
 */
export class PolicyParseError extends FaultError<readonly PolicyProblem[]> {
  constructor(
    /** Every problem, as values to match on; the message gives them as text. */
    readonly problems: readonly PolicyProblem[],
  ) {
    super("PolicyParseError", problems, (all) => `policy parse error: ${all.map(describePolicyProblem).join("; ")}`);
  }
}
