/**
 * @aegis/policy: Policy Sets (SPEC §15) and recheck (SPEC §16). Read a set, name it by its
 * `policy_set_hash`, decide live calls with it, and re-evaluate recorded ones.
 *
 * For: whoever writes, names or checks a Policy Set, decides live calls with one, or rechecks a
 * recorded Session.
 */
export {
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
  type RuleMatchers,
} from "./model.js";
export type { Glob } from "./glob.js";
export { parsePolicySet } from "./parse.js";
export { PolicyParseError, type PolicyProblem } from "./problems.js";
export type { Matched, UnboundParameter } from "./select.js";
export { decide, type CallAxes, type Decision, type DecisionCommon, type DecisionRequest, type DenialCause, type LiveState } from "./decide.js";
export { RateWindows } from "./rate-windows.js";
export { callOpening, outcomeOf, refusedOutcome, trapOf, type CallEnded, type CallEndedWithResponse, type DecidedCall, type GrantTerms } from "./outcome.js";
export { BindingsParseError, parseBindings, type Bindings, type NetBinding, type PathAccess, type PathBinding, type ToolBinding } from "./bindings.js";
export {
  describeRecheckLine,
  type Definite,
  type NowRule,
  type PolicyStatus,
  type RecheckIndeterminate,
  type RecheckSubject,
  type RecheckVerdict,
  type Recorded,
  type ToolSpecCheck,
} from "./recheck-verdict.js";
export { recheck, recheckRecord, type RecheckOptions, type RecheckTarget } from "./recheck.js";
export type { SkippedRow } from "./recheck.js";
