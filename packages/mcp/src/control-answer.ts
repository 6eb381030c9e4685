import { FaultError, type ApprovedScope, type FsGrant, type HttpGrant, type NetGrant } from "@aegis/format";
import type { ControlErrorCode, ControlRequest, ControlResponse } from "./control-messages.js";
import type { ListedArguments, ParkSummary } from "./park-summary.js";

/**
 * What `aegis approve` takes from the control socket's answer (SPEC §17.5). Whatever listens
 * at the path answers, and it need not be a wrap: the answer is checked against the shapes
 * §17.5 gives before anything is printed from it, and rebuilt from the members checked, so
 * that no unchecked value reaches the renderer. Members it does not know are ignored.
 */

/**
 * The answer read: `well_formed`, a {@link ControlResponse} to the request sent; `malformed`,
 * no wrap's answer, `detail` naming the member that is wrong (never its value, which may be
 * anything).
 */
export type ControlAnswerCheck = { readonly code: "well_formed"; readonly response: ControlResponse } | { readonly code: "malformed"; readonly detail: string };

// A record, so that the compiler says when ControlErrorCode gains a member this lacks.
const ERROR_CODES: Readonly<Record<ControlErrorCode, true>> = { unknown_approval: true, already_decided: true, bad_request: true, record_failed: true };

/** Check `value`, the answer's JSON, as the answer to `request`. */
export function checkControlAnswer(value: unknown, request: ControlRequest): ControlAnswerCheck {
  try {
    return { code: "well_formed", response: response(value, request) };
  } catch (error) {
    if (error instanceof Malformed) return { code: "malformed", detail: error.message };
    throw error;
  }
}

/** Thrown only inside {@link checkControlAnswer}, which turns it into its `malformed` answer. */
class Malformed extends FaultError<{ readonly detail: string }> {
  constructor(detail: string) {
    super("Malformed", { detail }, (f) => f.detail);
  }
}

type Members = { readonly [key: string]: unknown };

function isMembers(value: unknown): value is Members {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isErrorCode(value: unknown): value is ControlErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

/** `where`, for a detail: the member's path in the answer, `the answer` for the whole. */
function members(value: unknown, where: string): Members {
  if (!isMembers(value)) throw new Malformed(`${where}: expected an object`);
  return value;
}

function member(o: Members, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

function at(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}

function text(value: unknown, where: string): string {
  if (typeof value !== "string") throw new Malformed(`${where}: expected a string`);
  return value;
}

function integer(value: unknown, where: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > max)
    throw new Malformed(`${where}: expected an integer from 0 to ${max}`);
  return value;
}

function str(o: Members, key: string, parent = ""): string {
  return text(member(o, key), at(parent, key));
}

function list<T>(o: Members, key: string, parent: string, item: (value: unknown, where: string) => T): T[] {
  const v = member(o, key);
  const where = at(parent, key);
  if (!Array.isArray(v)) throw new Malformed(`${where}: expected an array`);
  const items: unknown[] = v;
  return items.map((x, i) => item(x, `${where}[${i}]`));
}

function response(value: unknown, request: ControlRequest): ControlResponse {
  const o = members(value, "the answer");
  const ok = member(o, "ok");
  if (ok === false) {
    const code = member(o, "code");
    if (!isErrorCode(code)) throw new Malformed(`code: expected ${Object.keys(ERROR_CODES).join(", ")}`);
    return { ok: false, code, message: str(o, "message") };
  }
  if (ok !== true) throw new Malformed("ok: expected true or false");
  // The answer is to this request: an answer to another would print what was not done.
  if (member(o, "op") !== request.op) throw new Malformed(`op: expected "${request.op}", the request's`);
  if (request.op === "list") return { ok: true, op: "list", pending: list(o, "pending", "", park) };
  if (str(o, "approval_id") !== request.approval_id) throw new Malformed("approval_id: expected the request's");
  const lineHash = str(o, "line_hash");
  if (!/^[0-9a-f]{64}$/.test(lineHash)) throw new Malformed("line_hash: expected 64 lowercase hex digits");
  return { ok: true, op: request.op, approval_id: request.approval_id, seq: integer(member(o, "seq"), "seq"), line_hash: lineHash };
}

function park(value: unknown, where: string): ParkSummary {
  const o = members(value, where);
  return {
    approval_id: str(o, "approval_id", where),
    tool_id: str(o, "tool_id", where),
    rule: ruleOf(member(o, "rule"), `${where}.rule`),
    parked_at: str(o, "parked_at", where),
    arguments: listedArguments(member(o, "arguments"), `${where}.arguments`),
    scope: scope(member(o, "scope"), `${where}.scope`),
  };
}

/** The rule that parked the call; `null` for the Policy Set's default. */
function ruleOf(value: unknown, where: string): string | null {
  if (value !== null && typeof value !== "string") throw new Malformed(`${where}: expected a string or null`);
  return value;
}

function listedArguments(value: unknown, where: string): ListedArguments {
  const o = members(value, where);
  const code = member(o, "code");
  if (code === "none" || code === "no_canonical_form") return { code };
  if (code !== "json") throw new Malformed(`${where}.code: expected none, json or no_canonical_form`);
  const truncated = member(o, "truncated");
  if (typeof truncated !== "boolean") throw new Malformed(`${where}.truncated: expected true or false`);
  return { code, json: str(o, "json", where), bytes: integer(member(o, "bytes"), `${where}.bytes`), truncated };
}

function scope(value: unknown, where: string): ApprovedScope {
  const o = members(value, where);
  const fs = member(o, "fs");
  const net = member(o, "net");
  return {
    tool_id: str(o, "tool_id", where),
    ...(fs === undefined ? {} : { fs: fsGrant(fs, `${where}.fs`) }),
    ...(net === undefined ? {} : { net: netGrant(net, `${where}.net`) }),
  };
}

function fsGrant(value: unknown, where: string): FsGrant {
  const o = members(value, where);
  return { read_paths: list(o, "read_paths", where, text), write_paths: list(o, "write_paths", where, text) };
}

function netGrant(value: unknown, where: string): NetGrant {
  return { http: list(members(value, where), "http", where, httpGrant) };
}

function httpGrant(value: unknown, where: string): HttpGrant {
  const o = members(value, where);
  const port = (p: unknown, at: string): number => integer(p, at, 65535);
  return { host: str(o, "host", where), ports: list(o, "ports", where, port), methods: list(o, "methods", where, text) };
}
