import { unreachable } from "@aegis/format";
import {
  JsonSyntaxError,
  MAX_ROW_BYTES,
  OutOfSpaceNumber,
  RowSplitter,
  decodeUtf8,
  isJsonObject,
  parseJson,
  readRows,
  readTypedLine,
  tryParseDigest,
  type JsonObject,
  type Row,
  type ToolSpecDigest,
} from "@aegis/format";
import { match } from "ts-pattern";
import { readRequest, type EnvelopeLookup } from "./envelope-read.js";
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
export type RecheckTarget = { readonly policy: PolicySet } | { readonly asRecorded: readonly PolicySet[] };

/** A row recheck could not read, and so could not tell whether it was an outcome. */
export type SkippedRow =
  | { readonly code: "does_not_parse"; readonly line: number; readonly detail: string }
  | { readonly code: "too_long"; readonly line: number; readonly length: number; readonly limit: number };

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
 * @throws the file system's error when the file cannot be opened or read.
 * @example
 * for await (const v of recheck("run.aarl", { policy: set })) console.log(describeRecheckLine(v));
 */
export function recheck(path: string, target: RecheckTarget, options: RecheckOptions = {}): AsyncGenerator<RecheckVerdict> {
  return recheckRows(readRows(path, MAX_ROW_BYTES, options.onRead), target, options);
}

/** {@link recheck} over a record file held in memory. */
export function recheckBytes(bytes: Uint8Array, target: RecheckTarget, options: RecheckOptions = {}): AsyncGenerator<RecheckVerdict> {
  return recheckRows(rowsOf(bytes), target, options);
}

function* rowsOf(bytes: Uint8Array): Generator<Row> {
  const splitter = new RowSplitter();
  yield* splitter.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  yield* splitter.end();
}

/** Placeholders for the members recheck does not judge, so the typed reading can be shared. */
const UNJUDGED = { key_id: "0".repeat(64), signature: "0".repeat(128) } as const;

async function* recheckRows(rows: AsyncIterable<Row> | Iterable<Row>, target: RecheckTarget, options: RecheckOptions): AsyncGenerator<RecheckVerdict> {
  const setFor = setChooser(target);
  let opens = 0;
  for await (const row of rows) {
    if (row.kind === "too_long") {
      options.onSkippedRow?.({ code: "too_long", line: row.line, length: row.length, limit: row.limit });
      continue;
    }
    const value = readValue(row, options);
    if (value === undefined) continue;
    const tag = value["line_type"];
    if (tag === "open") {
      opens++;
      continue;
    }
    // A v1 record tags itself with `phase` and has no `line_type`; it still is a recorded
    // call, so it earns a row (SPEC §16.1). A `line_type` that is there always wins.
    const phase = value["phase"];
    const routed = typeof tag === "string" ? tag : typeof phase === "string" ? phase : undefined;
    if (routed !== "outcome") continue;
    const callId = value["call_id"];
    const seq = value["seq"];
    const subject: RecheckSubject = {
      ...(typeof callId === "string" ? { call_id: callId } : {}),
      session_index: Math.max(opens - 1, 0),
      seq: typeof seq === "number" ? seq : 0,
      line: row.line,
      ...(options.currentTools === undefined ? {} : { tool_spec: toolSpecCheck(value, options.currentTools) }),
    };
    yield await verdictFor(value, subject, setFor, options.envelope);
  }
}

function readValue(row: Extract<Row, { kind: "row" }>, options: RecheckOptions): JsonObject | undefined {
  const text = decodeUtf8(row.bytes);
  if (text === undefined) {
    options.onSkippedRow?.({ code: "does_not_parse", line: row.line, detail: "not JSON: stream did not contain valid UTF-8" });
    return undefined;
  }
  try {
    const value = parseJson(text);
    return isJsonObject(value) ? value : undefined;
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    options.onSkippedRow?.({ code: "does_not_parse", line: row.line, detail: `not JSON: ${error.message}` });
    return undefined;
  }
}

type SetChooser = (hash: string) => PolicySet | undefined;

function setChooser(target: RecheckTarget): SetChooser {
  if ("policy" in target) {
    const set = target.policy;
    return () => set;
  }
  const byHash = new Map<string, PolicySet>(target.asRecorded.map((set) => [set.hash, set]));
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

async function verdictFor(value: JsonObject, subject: RecheckSubject, setFor: SetChooser, envelope: EnvelopeLookup | undefined): Promise<RecheckVerdict> {
  // A Line of another schema gives its member names meanings this build does not know:
  // no verdict from it can be trusted (SPEC §16.3). An absent version is left to the
  // typed reading, which requires 2.
  const version = value["schema_version"];
  if ((typeof version === "number" && version !== 2) || version instanceof OutOfSpaceNumber) {
    const text = typeof version === "number" ? String(version) : version.lexeme;
    return indeterminate(subject, { code: "unknown_policy_set_hash", detail: { code: "other_schema", schema_version: text } });
  }
  const typed = readTypedLine({ ...value, ...UNJUDGED });
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
  let selection: Selection = select(set, call, { code: "unavailable" });
  if (selection.code === "unbound" && selection.requestWouldHelp) {
    // Only now is the Envelope asked: a set whose argument matchers cannot win for this
    // call rechecks it from the Chain alone. With the bytes, selection runs again on
    // exactly what `decide` saw live, so the two cannot disagree.
    const read = await readRequest(line.request_digest, envelope);
    if (!read.ok) return indeterminate(subject, read.reason, recorded);
    selection = select(set, call, { code: "available", document: read.document });
  }
  if (selection.code === "unbound") {
    const parameter = selection.parameter;
    if (parameter === "request") throw new Error("unreachable: request bytes were given to selection");
    return indeterminate(subject, { code: "no_binding", detail: { code: "unbound", rule: selection.rule.id, parameter } }, recorded);
  }

  const matched = selection.matched;
  if (matched.kind === "default") {
    const now: NowRule = { kind: "default" };
    return { ...subject, code: compareRecorded(recorded.status, matched.action === "allow" ? "allowed" : "denied"), recorded, now };
  }
  const rule = matched.rule;
  const now: NowRule = { kind: "rule", id: rule.id };
  const nowClass = match(rule.action.kind)
    .with("allow", (): NowClass | undefined => "allowed")
    .with("deny", (): NowClass | undefined => "denied")
    // A call the record shows resumed under an approval satisfies the park (SPEC §16.2).
    .with("pending_approval", (): NowClass | undefined => (line.decision_axes.approval_ref === undefined ? "pending_approval" : "allowed"))
    // A window is counter and clock state that no record carries: unknowable, not guessed.
    .with("rate_limit", (): NowClass | undefined => undefined)
    .exhaustive(unreachable);
  if (nowClass === undefined) return indeterminate(subject, { code: "rate_limit_unevaluable", rule: rule.id }, recorded, now);
  return { ...subject, code: compareRecorded(recorded.status, nowClass), recorded, now };
}
