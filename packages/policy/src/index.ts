/**
 * @aegis/policy: Policy Sets (SPEC §15) and recheck (SPEC §16). Read a set, name it by its
 * `policy_set_hash`, decide live calls with it, and re-evaluate recorded ones.
 */
export {
  POLICY_VERSIONS,
  needsEnvelope,
  needsRateWindows,
  type ArgumentMatcher,
  type ArgumentTest,
  type ArgumentValue,
  type DefaultAction,
  type HostMatcher,
  type Limits,
  type NetMatcher,
  type PathMatcher,
  type PolicySet,
  type PolicyVersion,
  type PortMatcher,
  type RateSpec,
  type Rule,
  type RuleAction,
  type RuleKind,
  type RuleMatchers,
} from "./model.js";
export type { Glob } from "./glob.js";
export { loadPolicySet, parsePolicySet, tryParsePolicySet, type PolicyParseResult } from "./parse.js";
export { PolicyParseError, describePolicyProblem, type PolicyProblem, type PolicyProblemCode } from "./problems.js";
export { YAML_LIMITS } from "./yaml-tree.js";
export { PROJECTION_TAG, policySetHashOf, policySetProjection, projectPolicySet, type Projected, type ProjectionSource } from "./projection.js";
export { matchedRuleId, type Matched, type UnboundParameter } from "./select.js";
export {
  decide,
  describeParameter,
  mintApprovalId,
  type CallAxes,
  type Decision,
  type DecisionCode,
  type DecisionCommon,
  type DecisionRequest,
  type DenialCause,
  type LiveState,
} from "./decide.js";
export { RateWindows } from "./rate-windows.js";
export { callOpening, outcomeOf, refusedOutcome, trapOf, type CallEnded, type CallEndedWithResponse, type DecidedCall, type GrantTerms } from "./outcome.js";
export {
  BindingsParseError,
  loadBindings,
  parseBindings,
  tryParseBindings,
  type BindingsParseResult,
  type Bindings,
  type NetBinding,
  type PathAccess,
  type PathBinding,
  type ToolBinding,
} from "./bindings.js";
export { bindingFor, deriveAxes, describeUnresolved, type BoundPath, type DeriveContext, type Derived, type UnresolvedBinding } from "./derive-axes.js";
export type { EnvelopeLookup, EnvelopeRead } from "@aegis/format";
export {
  RECHECK_INDETERMINATE_CODES,
  compareRecorded,
  describeRecheck,
  describeRecheckLine,
  explainIndeterminate,
  type ChangeCode,
  type Definite,
  type NowClass,
  type NowRule,
  type PolicyStatus,
  type RecheckIndeterminate,
  type RecheckIndeterminateCode,
  type RecheckSubject,
  type RecheckVerdict,
  type RecheckVerdictCode,
  type Recorded,
  type ToolSpecCheck,
  type ToolSpecCheckCode,
} from "./recheck-verdict.js";
export { recheck, recheckBytes, recheckRecord, type RecheckOptions, type RecheckTarget, type SkippedRow } from "./recheck.js";
export { RecheckTally, nothingRechecked, recheckConclusion, summarizeRecheck, type RecheckConclusion, type RecheckSummary } from "./summary.js";
