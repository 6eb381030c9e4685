import { parsePolicySet, type PolicySet } from "@aegis/policy";

/**
 * The demo agent's Policy Set (SPEC §15), as a file an operator would keep. The demo writes
 * it beside the record, so `aegis recheck` can be run against it, or against an edit of it.
 */
export const DEMO_POLICY_YAML = `# The demo agent's Policy Set: read the workspace, never post outward, park shell commands.
version: 2
default: deny
rules:
  - id: read-workspace
    action: allow
    tool: fs.read
    fs: { path_prefix: /workspace/ }
    limits: { max_output_bytes: 1048576 }
  - id: deny-net-post
    action: deny
    tool: net.post
    reason: outbound POST is not allowed from this agent
  - id: park-shell
    action: pending_approval
    tool: shell.exec
`;

export const DEMO_POLICY: PolicySet = parsePolicySet(DEMO_POLICY_YAML);

/**
 * A stricter edit of the demo's set: shell commands are refused outright. Rechecking the
 * demo's record under it shows which calls a change of policy would have changed.
 */
export const STRICTER_POLICY_YAML = DEMO_POLICY_YAML.replace(
  "  - id: park-shell\n    action: pending_approval\n    tool: shell.exec\n",
  "  - id: deny-shell\n    action: deny\n    tool: shell.exec\n    reason: no shell commands from this agent\n",
);
