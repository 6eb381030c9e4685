import { type DecisionAxes, type EnvelopeLookup, type RecordRow, type ToolSpecDigest, type JsonObject, OutOfSpaceNumber } from "@aegis/format";
import { readRecordBytes, tryParseDigest, readLineBody, unreachable, readRecord } from "@aegis/format/internal";
import { readRequest } from "./envelope-read.js";
import type { PolicySet } from "./model.js";
import {
  compareRecorded,
  type NowClass,
  type NowRule,
  type RecheckIndeterminate,
  type RecheckSubject,
  type RecheckVerdict,
  type Recorded,
  type ToolSpecCheck,
} from "./recheck-verdict.js";
import { select, type Selection } from "./select.js";

/**
 * Recheck (SPEC §16): re-evaluate every recorded outcome of a record file under a Policy
 * Set and say, per call, how the answer compares with what was recorded.
 *
 * The file is read as the verifier reads it, row by row with the Chain's row splitter and
 * JSON reader, one row in memory at a time. Recheck does not verify: it judges no
 * signature and no chain link (that is `verify`'s question), so it answers for files
 * `verify` would call Tampered, and for the reference's hand-assembled fixtures.
 */

/**
 * Which set to recheck under: one set for every call, or, as recorded, for each call the
 * set among those given whose hash is the call's `policy_set_hash` (SPEC §16.1).
 */
export type RecheckTarget = { readonly code: "policy"; readonly policy: PolicySet } | { readonly code: "as_recorded"; readonly sets: readonly PolicySet[] };

/** A row recheck could not read, and so could not tell whether it was an outcome. */
export type SkippedRow =
  | { readonly code: "does_not_parse"; readonly line: number; readonly detail: string }
  | { readonly code: "too_long"; readonly line: number; readonly length: number; readonly limit: number };

/** What a recheck may consult besides the record and the sets, and what it tells its caller as it reads. */
export interface RecheckOptions {
  /** Where request bytes are read for argument matchers; without it they are missing. */
  readonly envelope?: EnvelopeLookup;
  /** Told of each row that could not be read (the reference warns on stderr and reads on). */
  readonly onSkippedRow?: (row: SkippedRow) => void;
  /** Told how many bytes of the file have been read, for progress. */
  readonly onRead?: (bytes: number) => void;
  /**
   * The tool definitions a server lists now, by name (SPEC §17.6): each verdict then says
   * whether the definition its call was made under has changed since.
   */
  readonly currentTools?: ReadonlyMap<string, ToolSpecDigest>;
}

/**
 * Recheck the record file at `path`, one verdict per recorded outcome, in file order.
 *
 * @throws the file system's error when the file cannot be opened or read, from the iteration
 * (calling `recheck` reads nothing); and whatever `options.envelope` rejects with.
 * @example
 * ```ts
 * for await (const v of recheck("run.aarl", { code: "policy", policy: set })) console.log(describeRecheckLine(v));
 * ```
 */
export function recheck(path: string, target: RecheckTarget, options: RecheckOptions = {}): AsyncGenerator<RecheckVerdict> {
  return recheckRecord(readRecord(path, options.onRead === undefined ? {} : { onRead: options.onRead }), target, options);
}

/** `recheck` over a record file held in memory. */
export function recheckBytes(bytes: Uint8Array, target: RecheckTarget, options: RecheckOptions = {}): AsyncGenerator<RecheckVerdict> {
  return recheckRecord(readRecordBytes(bytes), target, options);
}

/**
 * {@link recheck} over rows already being read: with `readVerifying`'s, one read of the
 * record both verifies it and rechecks it (a pipe works). `options.onRead` is not called;
 * the rows' reader reports progress.
 */
export async function* recheckRecord(rows: AsyncIterable<RecordRow>, target: RecheckTarget, options: RecheckOptions = {}): AsyncGenerator<RecheckVerdict> {
  const setFor = setChooser(target);
  for await (const row of rows) {
    if (row.code === "too_long") {
      options.onSkippedRow?.({ code: "too_long", line: row.row, length: row.length, limit: row.limit });
      continue;
    }
    if (row.code === "unreadable") {
      options.onSkippedRow?.({ code: "does_not_parse", line: row.row, detail: row.detail });
      continue;
    }
    if (row.code === "not_an_object") continue;
    const value = row.value;
    // A v1 record tags itself with `phase` and has no `line_type`; it still is a recorded
    // call, so it earns a row (SPEC §16.1). A `line_type` that is there always wins.
    const phase = value["phase"];
    const routed = row.lineType ?? (typeof phase === "string" ? phase : undefined);
    if (routed !== "outcome") continue;
    const callId = value["call_id"];
    const subject: RecheckSubject = {
      ...(typeof callId === "string" ? { call_id: callId } : {}),
      session_index: row.sessionIndex,
      seq: row.seq ?? 0,
      line: row.row,
      ...(options.currentTools === undefined ? {} : { tool_spec: toolSpecCheck(value, options.currentTools) }),
    };
    const verdict = verdictFor(value, subject, setFor, options.envelope);
    // Most calls need no Envelope: their verdict comes without a promise to wait on.
    yield verdict instanceof Promise ? await verdict : verdict;
  }
}

type SetChooser = (hash: string) => PolicySet | undefined;

/**
 * What a rule's action decides now. A switch, not a match: it runs once per recorded call,
 * and a match builds its handlers each time; `unreachable` keeps it exhaustive.
 */
function nowClassOf(action: PolicySet["rules"][number]["action"]["code"], resumedUnderApproval: boolean): NowClass | undefined {
  switch (action) {
    case "allow":
      return "allowed";
    case "deny":
      return "denied";
    // A call the record shows resumed under an approval satisfies the park (SPEC §16.2).
    case "pending_approval":
      return resumedUnderApproval ? "allowed" : "pending_approval";
    // A window is counter and clock state that no record carries: unknowable, not guessed.
    case "rate_limit":
      return undefined;
    default:
      return unreachable(action);
  }
}

function setChooser(target: RecheckTarget): SetChooser {
  if (target.code === "policy") {
    const set = target.policy;
    return () => set;
  }
  const byHash = new Map<string, PolicySet>(target.sets.map((set) => [set.hash, set]));
  return (hash) => byHash.get(hash);
}

/** The definition a call was made under, against the one listed now (SPEC §17.6). */
function toolSpecCheck(outcome: JsonObject, current: ReadonlyMap<string, ToolSpecDigest>): ToolSpecCheck {
  const tool = outcome["tool_id"];
  const now = typeof tool === "string" ? current.get(tool) : undefined;
  const text = outcome["tool_spec_digest"];
  const parsed = typeof text === "string" ? tryParseDigest("ToolSpecDigest", text) : undefined;
  if (parsed === undefined || !parsed.ok) return now === undefined ? { code: "unpinned" } : { code: "unpinned", current: now };
  const recorded = parsed.digest;
  if (now === undefined) return { code: "removed", recorded };
  return now === recorded ? { code: "unchanged", digest: now } : { code: "changed", recorded, current: now };
}

function indeterminate(subject: RecheckSubject, reason: RecheckIndeterminate, recorded?: Recorded, now?: NowRule): RecheckVerdict {
  return { ...subject, code: "indeterminate", reason, ...(recorded === undefined ? {} : { recorded }), ...(now === undefined ? {} : { now }) };
}

function verdictFor(
  value: JsonObject,
  subject: RecheckSubject,
  setFor: SetChooser,
  envelope: EnvelopeLookup | undefined,
): RecheckVerdict | Promise<RecheckVerdict> {
  // A Line of another schema gives its member names meanings this build does not know:
  // no verdict from it can be trusted (SPEC §16.3). An absent version is left to the
  // typed reading, which requires 2.
  const version = value["schema_version"];
  if ((typeof version === "number" && version !== 2) || version instanceof OutOfSpaceNumber) {
    const text = typeof version === "number" ? String(version) : version.lexeme;
    return indeterminate(subject, { code: "unknown_policy_set_hash", detail: { code: "other_schema", schema_version: text } });
  }
  const typed = readLineBody(value);
  if (!typed.ok || typed.value.line_type !== "outcome") {
    const problems = typed.ok ? [] : typed.problems;
    return indeterminate(subject, { code: "no_binding", detail: { code: "unreadable_outcome", problems } });
  }
  const line = typed.value.line;
  const recorded: Recorded = {
    status: line.policy.status,
    ...(line.decision_axes.matched_rule === undefined ? {} : { matched_rule: line.decision_axes.matched_rule }),
  };
  const set = setFor(line.policy_set_hash);
  if (set === undefined) {
    return indeterminate(subject, { code: "unknown_policy_set_hash", detail: { code: "not_given", policy_set_hash: line.policy_set_hash } }, recorded);
  }

  const call = { tool_id: line.tool_id, axes: line.decision_axes };
  const selection: Selection = select(set, call, { code: "unavailable" });
  if (selection.code === "unbound" && selection.requestWouldHelp) {
    // Only now is the Envelope asked: a set whose argument matchers cannot win for this
    // call rechecks it from the Chain alone. With the bytes, selection runs again on
    // exactly what `decide` saw live, so the two cannot disagree.
    return readRequest(line.request_digest, envelope).then((read) =>
      read.ok
        ? fromSelection(select(set, call, { code: "available", document: read.document }), subject, recorded, line.decision_axes)
        : indeterminate(subject, read.reason, recorded),
    );
  }
  return fromSelection(selection, subject, recorded, line.decision_axes);
}

/** The verdict a selection gives, against what was recorded. */
function fromSelection(selection: Selection, subject: RecheckSubject, recorded: Recorded, axes: DecisionAxes): RecheckVerdict {
  if (selection.code === "unbound") {
    const parameter = selection.parameter;
    if (parameter === "request") throw new Error("unreachable: request bytes were given to selection");
    const rule = selection.rule.id;
    const detail = parameter === "arguments" ? { code: "unevaluable" as const, rule } : { code: "unbound" as const, rule, parameter };
    return indeterminate(subject, { code: "no_binding", detail }, recorded);
  }
  const matched = selection.matched;
  if (matched.code === "default") {
    const now: NowRule = { kind: "default" };
    return { ...subject, code: compareRecorded(recorded.status, matched.action === "allow" ? "allowed" : "denied"), recorded, now };
  }
  const rule = matched.rule;
  const now: NowRule = { kind: "rule", id: rule.id };
  const nowClass = nowClassOf(rule.action.code, axes.approval_ref !== undefined);
  if (nowClass === undefined) return indeterminate(subject, { code: "rate_limit_unevaluable", rule: rule.id }, recorded, now);
  return { ...subject, code: compareRecorded(recorded.status, nowClass), recorded, now };
}
