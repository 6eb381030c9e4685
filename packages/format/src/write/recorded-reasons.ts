/**
 * The words an outcome records when a station did not judge a call or the call did not run
 * (SPEC §13.2, §17.2). They are the reference's, so a record reads the same whoever wrote it,
 * and a reader (the span exporter, SPEC Appendix A.4) tells them from a station's own reason
 * by comparing with these. Defined here once: the writer, `outcomeOf`, wrap and the demo
 * record them.
 */
export const RECORDED_REASON = {
  /** `policy.reason` or `capability.reason` of a station that did not judge the call. */
  notEvaluated: "not evaluated",
  /** `execution.reason` of a call that did not run. */
  notExecuted: "not executed",
  /** `execution.reason` of a call still in flight when its writer closed. */
  sessionAbandoned: "session abandoned",
  /** `execution.message` of a call whose body threw. */
  hostPanic: "host panic during tool call",
  /** `capability.reason` of a call the policy refused before a capability was minted. */
  blockedBeforeCapability: "policy blocked before capability",
} as const;
