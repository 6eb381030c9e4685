import { tryParseDigest, type DigestKind, type Digest } from "./digest.js";
import { checkHex } from "./hex.js";
import { isJsonObject, type JsonObject, type JsonValue } from "./json.js";
import type {
  SignatureBlock,
  ApprovalVerdict,
  ApprovedScope,
  CapabilityGrant,
  CapabilityOutcome,
  CloseLine,
  DecisionAxes,
  DecisionLine,
  EnvelopeAccess,
  ExecutionOutcome,
  FsGrant,
  HttpGrant,
  IntentLine,
  NetGrant,
  OpenLine,
  OutcomeLine,
  PolicyOutcome,
  PublicKeyHex,
  SignatureHex,
} from "./line-types.js";

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
export type Unsigned<T> = Omit<T, keyof SignatureBlock>;

/** A Line read for what it says, its signature members not judged (recheck, show: `verify` judges them). */
export type LineBody = TypedLine<Record<never, never>>;

/**
 * What reading a Line as its type gives: the typed Line, or every member that does not fit,
 * each as `<path>: expected <what>` (e.g. `$.seq: expected an integer (missing)`).
 */
export type TypedLineResult<S extends object = SignatureBlock> =
  { readonly ok: true; readonly value: TypedLine<S> } | { readonly ok: false; readonly problems: readonly string[] };

class Fields {
  readonly problems: string[] = [];

  bad(path: string, expected: string): void {
    this.problems.push(`${path}: expected ${expected}`);
  }

  obj(v: JsonValue | undefined, path: string): JsonObject | undefined {
    if (isJsonObject(v)) return v;
    this.bad(path, v === undefined ? "an object (missing)" : "an object");
    return undefined;
  }

  str(o: JsonObject, key: string, path: string): string {
    const v = o[key];
    if (typeof v === "string") return v;
    this.bad(`${path}.${key}`, v === undefined ? "a string (missing)" : "a string");
    return "";
  }

  optStr(o: JsonObject, key: string, path: string): string | undefined {
    return o[key] === undefined ? undefined : this.str(o, key, path);
  }

  int(o: JsonObject, key: string, path: string): number {
    const v = o[key];
    if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
    this.bad(`${path}.${key}`, v === undefined ? "an integer (missing)" : "a non-negative integer");
    return 0;
  }

  /** RFC 3339 in UTC with milliseconds, as the writer spells a Date (SPEC §13.7). */
  optTime(o: JsonObject, key: string, path: string): string | undefined {
    const v = o[key];
    if (v === undefined) return undefined;
    if (typeof v === "string" && isLineTime(v)) return v;
    this.bad(`${path}.${key}`, "a time as YYYY-MM-DDTHH:MM:SS.sssZ");
    return undefined;
  }

  optInt(o: JsonObject, key: string, path: string): number | undefined {
    return o[key] === undefined ? undefined : this.int(o, key, path);
  }

  digest<K extends DigestKind>(kind: K, o: JsonObject, key: string, path: string): Digest<K> {
    const v = o[key];
    if (typeof v === "string") {
      const parsed = tryParseDigest(kind, v);
      if (parsed.ok) return parsed.digest;
    }
    this.bad(`${path}.${key}`, "64 lowercase hex");
    return "" as Digest<K>;
  }

  optDigest<K extends DigestKind>(kind: K, o: JsonObject, key: string, path: string): Digest<K> | undefined {
    return o[key] === undefined ? undefined : this.digest(kind, o, key, path);
  }

  hex(o: JsonObject, key: string, path: string, length: number): string {
    const v = o[key];
    if (typeof v === "string" && checkHex(v, length) === undefined) return v;
    this.bad(`${path}.${key}`, `${length} lowercase hex`);
    return "";
  }

  strings(v: JsonValue | undefined, path: string): string[] {
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
    this.bad(path, "an array of strings");
    return [];
  }

  ints(v: JsonValue | undefined, path: string): number[] {
    if (Array.isArray(v) && v.every((x) => typeof x === "number")) return v as number[];
    this.bad(path, "an array of integers");
    return [];
  }

  tag<T extends string>(o: JsonObject, key: string, path: string, allowed: readonly T[]): T | undefined {
    const v = o[key];
    if (typeof v === "string" && (allowed as readonly string[]).includes(v)) return v as T;
    this.bad(`${path}.${key}`, `one of ${allowed.join(", ")}`);
    return undefined;
  }
}

/** Only the members the type defines are kept; unknown members do not survive a typed read. */
function compact<T extends object>(record: { [K in keyof T]: T[K] | undefined }): T {
  // A loop over keys, not Object.entries: recheck reads a million Lines, and a pair per member is garbage.
  const out: Record<string, unknown> = {};
  for (const k in record) {
    const v: unknown = record[k];
    if (v !== undefined) out[k] = v;
  }
  return out as T;
}

// The tags each member may hold, made once rather than per Line read.
const POLICY_STATUSES = ["allowed", "denied", "rate_limited", "pending_approval"] as const;
const CAPABILITY_STATUSES = ["granted", "denied"] as const;
const EXECUTION_STATUSES = ["success", "trap", "resource_exceeded", "host_denied"] as const;
const APPROVAL_VERDICTS = ["approved", "denied"] as const;

function fsGrant(f: Fields, v: JsonValue | undefined, path: string): FsGrant | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  return { read_paths: f.strings(o["read_paths"], `${path}.read_paths`), write_paths: f.strings(o["write_paths"], `${path}.write_paths`) };
}

function netGrant(f: Fields, v: JsonValue | undefined, path: string): NetGrant | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  const http = o["http"];
  if (!Array.isArray(http)) {
    f.bad(`${path}.http`, "an array");
    return undefined;
  }
  const entries: HttpGrant[] = [];
  (http as readonly JsonValue[]).forEach((entry, i) => {
    const p = `${path}.http[${i}]`;
    const e = f.obj(entry, p);
    if (e === undefined) return;
    entries.push({ host: f.str(e, "host", p), ports: f.ints(e["ports"], `${p}.ports`), methods: f.strings(e["methods"], `${p}.methods`) });
  });
  return { http: entries };
}

function grant(f: Fields, v: JsonValue | undefined, path: string): CapabilityGrant | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  return compact<CapabilityGrant>({
    grant_id: f.str(o, "grant_id", path),
    tool_id: f.str(o, "tool_id", path),
    fs: o["fs"] === undefined ? undefined : fsGrant(f, o["fs"], `${path}.fs`),
    net: o["net"] === undefined ? undefined : netGrant(f, o["net"], `${path}.net`),
    max_memory_bytes: f.int(o, "max_memory_bytes", path),
    max_wall_ms: f.int(o, "max_wall_ms", path),
    max_output_bytes: f.int(o, "max_output_bytes", path),
  });
}

function policy(f: Fields, v: JsonValue | undefined, path: string): PolicyOutcome | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  switch (f.tag(o, "status", path, POLICY_STATUSES)) {
    case "allowed":
      return { status: "allowed" };
    case "denied":
      return { status: "denied", reason: f.str(o, "reason", path) };
    case "rate_limited":
      return { status: "rate_limited", reason: f.str(o, "reason", path) };
    case "pending_approval":
      return { status: "pending_approval", approval_id: f.str(o, "approval_id", path) };
    case undefined:
      return undefined;
  }
}

function capability(f: Fields, v: JsonValue | undefined, path: string): CapabilityOutcome | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  switch (f.tag(o, "status", path, CAPABILITY_STATUSES)) {
    case "granted": {
      const g = grant(f, o["grant"], `${path}.grant`);
      return g === undefined ? undefined : { status: "granted", grant: g };
    }
    case "denied":
      return compact<CapabilityOutcome>({
        status: "denied",
        reason: f.str(o, "reason", path),
        denied_capability: f.optStr(o, "denied_capability", path),
      });
    case undefined:
      return undefined;
  }
}

function execution(f: Fields, v: JsonValue | undefined, path: string): ExecutionOutcome | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  switch (f.tag(o, "status", path, EXECUTION_STATUSES)) {
    case "success":
      return { status: "success" };
    case "trap":
      return { status: "trap", message: f.str(o, "message", path) };
    case "resource_exceeded":
      return { status: "resource_exceeded", kind: f.str(o, "kind", path) };
    case "host_denied":
      return { status: "host_denied", reason: f.str(o, "reason", path) };
    case undefined:
      return undefined;
  }
}

function axes(f: Fields, v: JsonValue | undefined, path: string): DecisionAxes | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  const fsAxis = o["fs"] === undefined ? undefined : f.obj(o["fs"], `${path}.fs`);
  const netAxis = o["net"] === undefined ? undefined : f.obj(o["net"], `${path}.net`);
  return compact<DecisionAxes>({
    capability: f.optStr(o, "capability", path),
    role: f.optStr(o, "role", path),
    session: f.optStr(o, "session", path),
    matched_rule: f.optStr(o, "matched_rule", path),
    approval_ref: f.optStr(o, "approval_ref", path),
    fs: fsAxis === undefined ? undefined : { path_raw: f.str(fsAxis, "path_raw", `${path}.fs`), path_canonical: f.str(fsAxis, "path_canonical", `${path}.fs`) },
    net: netAxis === undefined ? undefined : { host: f.str(netAxis, "host", `${path}.net`), port: f.int(netAxis, "port", `${path}.net`) },
  });
}

/** SPEC §14.11 (aegis-ts): a read of Envelope bytes an access record names. */
function access(f: Fields, v: JsonValue | undefined, path: string): EnvelopeAccess | undefined {
  if (v === undefined) return undefined;
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  return {
    digest: f.hex(o, "digest", path, 64),
    reason: f.str(o, "reason", path),
    os_user: f.str(o, "os_user", path),
    reader_key_id: f.digest("KeyId", o, "reader_key_id", path),
  };
}

function scope(f: Fields, v: JsonValue | undefined, path: string): ApprovedScope | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  return compact<ApprovedScope>({
    tool_id: f.str(o, "tool_id", path),
    fs: o["fs"] === undefined ? undefined : fsGrant(f, o["fs"], `${path}.fs`),
    net: o["net"] === undefined ? undefined : netGrant(f, o["net"], `${path}.net`),
  });
}

function verdict(f: Fields, v: JsonValue | undefined, path: string): ApprovalVerdict | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  switch (f.tag(o, "verdict", path, APPROVAL_VERDICTS)) {
    case "approved": {
      const s = scope(f, o["scope"], `${path}.scope`);
      return s === undefined ? undefined : { verdict: "approved", scope: s };
    }
    case "denied":
      return { verdict: "denied", reason: f.str(o, "reason", path) };
    case undefined:
      return undefined;
  }
}

/** Read a parsed Line as its typed record, or list every member that does not fit. */
export function readTypedLine(value: JsonObject): TypedLineResult {
  return readLine(value, (f, $) => ({
    key_id: f.digest("KeyId", value, "key_id", $),
    signature: f.hex(value, "signature", $, 128) as SignatureHex,
  }));
}

/** As `readTypedLine` (in `@aegis/format`), with `key_id` and `signature` neither demanded nor read. */
export function readLineBody(value: JsonObject): TypedLineResult<Record<never, never>> {
  return readLine(value, () => ({}));
}

const LINE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z$/;

/**
 * The writer's spelling of a time, and a real one: what `new Date(text).toISOString()` would
 * spell back (2026-02-30 and 24:00 roll over, so they are refused), decided by arithmetic,
 * because a Date per Line costs a reader of a million Lines most of a second.
 */
export function isLineTime(text: string): boolean {
  const m = LINE_TIME.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour < 24 && minute < 60 && second < 60;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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
  const prev_hash = f.digest("PrevHash", value, "prev_hash", $);
  let typed: TypedLine<S> | undefined;
  switch (token) {
    case "open": {
      const line = compact<Unsigned<OpenLine>>({
        schema_version: 2,
        seq,
        prev_hash,
        time,
        line_type: "open",
        public_key: f.hex(value, "public_key", $, 64) as PublicKeyHex,
        prev_session_tail: f.optDigest("LineHash", value, "prev_session_tail", $),
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
          request_digest: f.digest("RequestDigest", value, "request_digest", $),
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
        request_digest: f.digest("RequestDigest", value, "request_digest", $),
        policy_set_hash: f.digest("PolicySetHash", value, "policy_set_hash", $),
        grant_id: f.optStr(value, "grant_id", $),
        response_digest: f.optDigest("ResponseDigest", value, "response_digest", $),
        wall_ms: f.optInt(value, "wall_ms", $),
        peak_memory_bytes: f.optInt(value, "peak_memory_bytes", $),
        tool_spec_digest: f.optDigest("ToolSpecDigest", value, "tool_spec_digest", $),
        envelope_access: access(f, value["envelope_access"], "$.envelope_access"),
        continues_call: f.optStr(value, "continues_call", $),
        policy: p,
        capability: c,
        execution: e,
        decision_axes: a,
      });
      const sig = signatureOf(f, $);
      if (p !== undefined && c !== undefined && e !== undefined && a !== undefined) typed = { line_type: "outcome", line: Object.assign(line, sig) };
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
      const sig = signatureOf(f, $);
      if (v !== undefined) typed = { line_type: "decision", line: Object.assign(line, sig) };
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
  if (f.problems.length > 0 || typed === undefined) return { ok: false, problems: f.problems };
  return { ok: true, value: typed };
}
