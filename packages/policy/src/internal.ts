/**
 * `@aegis/policy/internal`: what aegis's own packages (the CLI, the relay, the bench and the
 * vector generator) share and nobody else should need: loading from files, the relay's
 * derivation of call axes, recheck's conclusion and tallies. It follows the other `@aegis/*`
 * packages of the same version and makes no promise of compatibility to anyone else; the
 * public API is `@aegis/policy` (ADR 0030).
 *
 * @packageDocumentation
 */
export { needsEnvelope } from "./model.js";
export { loadPolicySet, tryParsePolicySet } from "./parse.js";
export { describePolicyProblem } from "./problems.js";
export { matchedRuleId } from "./select.js";
export { loadBindings } from "./bindings.js";
export { deriveAxes, describeUnresolved, type Derived, type UnresolvedBinding } from "./derive-axes.js";
export { compareRecorded, explainIndeterminate, type NowClass } from "./recheck-verdict.js";
export { RecheckTally, exitCodeOfRecheck, type RecheckConclusion, type RecheckSummary } from "./summary.js";
