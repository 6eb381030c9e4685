/**
 * What each case must answer, stated by hand from the SPEC, independently of the code that
 * computes the expected results: decisions as [verdict, rule] (null: the default), or the codes
 * of the problems that refuse the set, in order. The generator refuses to write a vector whose
 * computed answer differs.
 */
export const STATED: Readonly<Record<string, readonly (readonly [string, string | null])[] | readonly string[]>> = {
  hash_example: [
    ["allowed", "read-docs"],
    ["denied", "no-shell"],
  ],
  hash_layout_independent: [],
  hash_defaults_written: [],
  hash_rule_order: [],
  deny_wins: [["denied", "deny-any"]],
  specificity: [
    ["allowed", "allow-tool-role"],
    ["pending_approval", "park-tool"],
  ],
  priority: [["allowed", "allow-high"]],
  full_tie_earlier: [["pending_approval", "first"]],
  default_deny: [["denied", null]],
  default_allow_absent: [["allowed", null]],
  role_wildcard: [
    ["allowed", "any-role"],
    ["allowed", "any-role"],
  ],
  v2_fs_prefix: [
    ["allowed", "workspace"],
    ["denied", null],
  ],
  v2_fs_glob: [
    ["allowed", "markdown"],
    ["allowed", "markdown"],
    ["denied", null],
  ],
  v2_net: [
    ["allowed", "internal-https"],
    ["denied", null],
    ["denied", null],
  ],
  v2_session: [
    ["denied", "quarantine"],
    ["allowed", null],
  ],
  v2_args: [
    ["denied", "no-force-main"],
    ["allowed", null],
    ["allowed", null],
    ["allowed", null],
  ],
  v2_unbound_fails_closed: [["denied", "tmp-only"]],
  approval_resumes: [
    ["pending_approval", "park-shell"],
    ["allowed", "park-shell"],
    ["denied", "deny-rm"],
  ],
  rate_limit_window: [
    ["allowed", "one-search"],
    ["rate_limited", "one-search"],
    ["allowed", null],
  ],
  refuse_unknown_key: ["unknown_key", "unknown_key"],
  refuse_duplicate_id: ["duplicate_rule_id"],
  refuse_rate_on_allow: ["rate_not_allowed"],
  refuse_rate_missing: ["rate_required"],
  refuse_wrong_types: ["wrong_type", "wrong_type"],
  refuse_version_3: ["unsupported_version"],
  refuse_bad_action: ["bad_value"],
  refuse_limits_on_deny: ["limits_not_allowed"],
  refuse_v2_key_in_v1: ["version_2_only"],
  refuse_conflicting_fs: ["conflicting_keys"],
  refuse_relative_fs: ["bad_value", "bad_value", "bad_value"],
  refuse_port_range_inverted: ["bad_value"],
  refuse_bad_pointer: ["bad_value"],
  refuse_yaml_syntax: ["yaml_syntax"],
  refuse_duplicate_yaml_key: ["yaml_syntax"],
  refuse_alias: ["yaml_feature", "yaml_feature", "wrong_type"],
  refuse_everything_at_once: ["unsupported_version", "unknown_key", "rate_not_allowed", "duplicate_rule_id", "wrong_type"],
};
