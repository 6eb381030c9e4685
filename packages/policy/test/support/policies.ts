import { parsePolicySet, type PolicySet } from "../../src/index.js";

/** A Policy Set from lines of YAML, so tests read as the file would. */
export function policy(...lines: string[]): PolicySet {
  return parsePolicySet(`${lines.join("\n")}\n`);
}

/** The example set of SPEC §15.4. */
export const SPEC_EXAMPLE = `# SPEC §15.4 example
version: 2
default: deny
rules:
  - id: read-workspace
    action: allow
    tool: fs.read
    fs: { path_prefix: /workspace/ }
  - id: no-force-push
    action: deny
    tool: git.push
    priority: -1
    reason: force pushes need a human
    args:
      - pointer: /params/arguments/force
        exact: true
  - id: throttle-search
    action: rate_limit
    tool: search
    rate: { max: 100, per_seconds: 60 }
`;
