import type { JsonObject } from "./json.js";
import type { CloseLine, DecisionLine, IntentLine, OpenLine, OutcomeLine, PublicKeyHex, SignatureBlock, SignatureHex } from "./line-types.js";
import { Fields, access, axes, capability, compact, confinement, execution, policy, verdict } from "./line-members.js";

export { isLineTime } from "./line-time.js";

/**
 * Typed reading of a Line's members (SPEC §5.3). A verifier does not need this: it
 * judges lines on their header, signature and bytes. `show`, recheck and tests read
 * lines as records, and a record that does not fit its type is reported with every
 * bad path at once.
 */
export type TypedLine<S extends object = SignatureBlock> =
  | { readonly line_type: "open"; readonly line: Unsigned<OpenLine> & S }
  | { readonly line_type: "intent"; readonly line: IntentLine }
  | { readonly line_type: "outcome"; readonly line: Unsigned<OutcomeLine> & S }
  | { readonly line_type: "decision"; readonly line: Unsigned<DecisionLine> & S }
  | { readonly line_type: "close"; readonly line: Unsigned<CloseLine> & S }
  | { readonly line_type: "checkpoint"; readonly line: JsonObject }
  | { readonly line_type: "unknown"; readonly token: string; readonly line: JsonObject };

/** A signed Line's members without its `key_id` and `signature`. */
type Unsigned<T> = Omit<T, keyof SignatureBlock>;

/**
 * What reading a Line as its type gives: the typed Line, or every member that does not fit,
 * each as `<path>: expected <what>` (e.g. `$.seq: expected an integer (missing)`).
 */
export type TypedLineResult<S extends object = SignatureBlock> =
  { readonly ok: true; readonly value: TypedLine<S> } | { readonly ok: false; readonly problems: readonly string[] };

/** Read a parsed Line as its typed record, or list every member that does not fit. */
export function readTypedLine(value: JsonObject): TypedLineResult {
  return readLine(value, (f, $) => ({
    key_id: f.digest<"KeyId">(value, "key_id", $),
    signature: f.hex(value, "signature", $, 128) as SignatureHex,
  }));
}

/** As `readTypedLine` (in `@aegis/format`), with `key_id` and `signature` neither demanded nor read. */
export function readLineBody(value: JsonObject): TypedLineResult<Record<never, never>> {
  // Stryker disable next-line ArrowFunction: equivalent E13
  return readLine(value, () => ({}));
}

function readLine<S extends object>(value: JsonObject, signatureOf: (f: Fields, path: string) => S): TypedLineResult<S> {
  const f = new Fields();
  const $ = "$";
  const token = value["line_type"];
  if (typeof token !== "string") return { ok: false, problems: ["$.line_type: expected a string"] };
  const schemaVersion = value["schema_version"];
  if (schemaVersion !== 2) f.bad("$.schema_version", "2");
  // The header's members are named in each literal, never spread into it: a spread that is
  // not a literal's first member, and then a loop over the keys of what it built, put V8 on
  // a slow path (28 µs per outcome read against 1.5; recheck reads every outcome of a month).
  const time = f.optTime(value, "time", $);
  const seq = f.int(value, "seq", $);
  const prev_hash = f.digest<"PrevHash">(value, "prev_hash", $);
  let typed: TypedLine<S>;
  switch (token) {
    case "open": {
      const line = compact<Unsigned<OpenLine>>({
        schema_version: 2,
        seq,
        prev_hash,
        time,
        line_type: "open",
        public_key: f.hex(value, "public_key", $, 64) as PublicKeyHex,
        prev_session_tail: f.optDigest<"LineHash">(value, "prev_session_tail", $),
        confinement: confinement(f, value["confinement"], "$.confinement"),
      });
      typed = { line_type: "open", line: Object.assign(line, signatureOf(f, $)) };
      break;
    }
    case "intent":
      typed = {
        line_type: "intent",
        line: compact<IntentLine>({
          schema_version: 2,
          seq,
          prev_hash,
          time,
          line_type: "intent",
          call_id: f.str(value, "call_id", $),
          tool_id: f.str(value, "tool_id", $),
          request_digest: f.digest<"RequestDigest">(value, "request_digest", $),
          envelope_access: access(f, value["envelope_access"], "$.envelope_access"),
        }),
      };
      break;
    case "outcome": {
      const p = policy(f, value["policy"], "$.policy");
      const c = capability(f, value["capability"], "$.capability");
      const e = execution(f, value["execution"], "$.execution");
      const a = axes(f, value["decision_axes"], "$.decision_axes");
      const line = compact<Unsigned<OutcomeLine>>({
        schema_version: 2,
        seq,
        prev_hash,
        time,
        line_type: "outcome",
        call_id: f.str(value, "call_id", $),
        tool_id: f.str(value, "tool_id", $),
        request_digest: f.digest<"RequestDigest">(value, "request_digest", $),
        policy_set_hash: f.digest<"PolicySetHash">(value, "policy_set_hash", $),
        grant_id: f.optStr(value, "grant_id", $),
        response_digest: f.optDigest<"ResponseDigest">(value, "response_digest", $),
        wall_ms: f.optInt(value, "wall_ms", $),
        peak_memory_bytes: f.optInt(value, "peak_memory_bytes", $),
        tool_spec_digest: f.optDigest<"ToolSpecDigest">(value, "tool_spec_digest", $),
        envelope_access: access(f, value["envelope_access"], "$.envelope_access"),
        continues_call: f.optStr(value, "continues_call", $),
        policy: p,
        capability: c,
        execution: e,
        decision_axes: a,
      });
      typed = { line_type: "outcome", line: Object.assign(line, signatureOf(f, $)) };
      break;
    }
    case "decision": {
      const v = verdict(f, value["verdict"], "$.verdict");
      const line = compact<Unsigned<DecisionLine>>({
        schema_version: 2,
        seq,
        prev_hash,
        time,
        line_type: "decision",
        approval_id: f.str(value, "approval_id", $),
        verdict: v,
      });
      typed = { line_type: "decision", line: Object.assign(line, signatureOf(f, $)) };
      break;
    }
    case "close": {
      const line = compact<Unsigned<CloseLine>>({ schema_version: 2, seq, prev_hash, time, line_type: "close" });
      typed = { line_type: "close", line: Object.assign(line, signatureOf(f, $)) };
      break;
    }
    case "checkpoint":
      typed = { line_type: "checkpoint", line: value };
      break;
    default:
      typed = { line_type: "unknown", token, line: value };
  }
  // A member reader gives undefined only after noting why in f.problems (line-members.ts), so
  // a Line built with a member missing is never returned: it has a problem, and is refused here.
  if (f.problems.length > 0) return { ok: false, problems: f.problems };
  return { ok: true, value: typed };
}
