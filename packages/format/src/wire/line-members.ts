import type { DigestKind, Digest } from "./digest.js";
import { checkHex } from "./hex.js";
import { isJsonObject, type JsonObject, type JsonValue } from "./json.js";
import type {
  ApprovalVerdict,
  ApprovedScope,
  CapabilityGrant,
  CapabilityOutcome,
  Confinement,
  DecisionAxes,
  EnvelopeAccess,
  ExecutionOutcome,
  FsGrant,
  HttpGrant,
  NetGrant,
  PolicyOutcome,
} from "./line-types.js";
import { isLineTime } from "./line-time.js";

// The typed reading of a Line's members (SPEC §3-§5): each reader takes one member and notes,
// in Fields, every path that does not fit. line-read.ts puts them together per line_type.

export class Fields {
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
    // Stryker disable next-line StringLiteral: equivalent E14
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

  /**
   * A digest is 64 lowercase hex, whatever its kind (SPEC §2): checked here as tryParseDigest
   * checks it. The kind is a type argument only, since tryParseDigest does not read its own either.
   */
  digest<K extends DigestKind>(o: JsonObject, key: string, path: string): Digest<K> {
    return this.hex(o, key, path, 64) as Digest<K>;
  }

  optDigest<K extends DigestKind>(o: JsonObject, key: string, path: string): Digest<K> | undefined {
    return o[key] === undefined ? undefined : this.digest<K>(o, key, path);
  }

  hex(o: JsonObject, key: string, path: string, length: number): string {
    const v = o[key];
    if (typeof v === "string" && checkHex(v, length) === undefined) return v;
    this.bad(`${path}.${key}`, `${length} lowercase hex`);
    // Stryker disable next-line StringLiteral: equivalent E15
    return "";
  }

  strings(v: JsonValue | undefined, path: string): string[] {
    if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
    this.bad(path, "an array of strings");
    // Stryker disable next-line ArrayDeclaration: equivalent E16
    return [];
  }

  bool(o: JsonObject, key: string, path: string): boolean {
    const v = o[key];
    if (typeof v === "boolean") return v;
    this.bad(`${path}.${key}`, v === undefined ? "a boolean (missing)" : "a boolean");
    return false;
  }

  ints(v: JsonValue | undefined, path: string): number[] {
    if (Array.isArray(v) && v.every((x) => typeof x === "number")) return v as number[];
    this.bad(path, "an array of integers");
    // Stryker disable next-line ArrayDeclaration: equivalent E17
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
export function compact<T extends object>(record: { [K in keyof T]: T[K] | undefined }): T {
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

export function policy(f: Fields, v: JsonValue | undefined, path: string): PolicyOutcome | undefined {
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
    // Stryker disable next-line ConditionalExpression: equivalent E18
    case undefined:
      return undefined;
  }
}

export function capability(f: Fields, v: JsonValue | undefined, path: string): CapabilityOutcome | undefined {
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
    // Stryker disable next-line ConditionalExpression: equivalent E19
    case undefined:
      return undefined;
  }
}

export function execution(f: Fields, v: JsonValue | undefined, path: string): ExecutionOutcome | undefined {
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
    // Stryker disable next-line ConditionalExpression: equivalent E20
    case undefined:
      return undefined;
  }
}

export function axes(f: Fields, v: JsonValue | undefined, path: string): DecisionAxes | undefined {
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
export function access(f: Fields, v: JsonValue | undefined, path: string): EnvelopeAccess | undefined {
  if (v === undefined) return undefined;
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  return {
    digest: f.hex(o, "digest", path, 64),
    reason: f.str(o, "reason", path),
    os_user: f.str(o, "os_user", path),
    reader_key_id: f.digest<"KeyId">(o, "reader_key_id", path),
  };
}

const MECHANISMS = ["bubblewrap", "none"] as const;
const KINDS = ["read", "write", "net"] as const;

/** An `open`'s `confinement` (SPEC §17.11), every member required. */
export function confinement(f: Fields, v: JsonValue | undefined, path: string): Confinement | undefined {
  if (v === undefined) return undefined;
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  const notEnforced = f.strings(o["not_enforced"], `${path}.not_enforced`);
  const kinds = notEnforced.filter((k): k is (typeof KINDS)[number] => (KINDS as readonly string[]).includes(k));
  if (kinds.length !== notEnforced.length) f.bad(`${path}.not_enforced`, `an array of ${KINDS.join(", ")}`);
  return {
    mechanism: f.tag(o, "mechanism", path, MECHANISMS) ?? "none",
    version: f.str(o, "version", path),
    read: f.strings(o["read"], `${path}.read`),
    write: f.strings(o["write"], `${path}.write`),
    net: f.strings(o["net"], `${path}.net`),
    exec_support: f.bool(o, "exec_support", path),
    best_effort: f.bool(o, "best_effort", path),
    not_enforced: kinds,
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

export function verdict(f: Fields, v: JsonValue | undefined, path: string): ApprovalVerdict | undefined {
  const o = f.obj(v, path);
  if (o === undefined) return undefined;
  switch (f.tag(o, "verdict", path, APPROVAL_VERDICTS)) {
    case "approved": {
      const s = scope(f, o["scope"], `${path}.scope`);
      return s === undefined ? undefined : { verdict: "approved", scope: s };
    }
    case "denied":
      return { verdict: "denied", reason: f.str(o, "reason", path) };
    // Stryker disable next-line ConditionalExpression: equivalent E21
    case undefined:
      return undefined;
  }
}
