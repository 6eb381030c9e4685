import { unmatched, describePosition, type OutcomeLine } from "@aegis/format/internal";
import { match } from "ts-pattern";
import { KeyId, type ApprovalVerdict, type CapabilityGrant, type FsGrant, type NetGrant } from "@aegis/format";
import type { Confinement } from "@aegis/format/browser";
import type { Entry } from "./entries.js";
import type { ApprovalLinks } from "./index-pass.js";

/** Human text for one entry. Deterministic: what the file says (its Lines' times too), no paths, not the clock. */
export function renderEntry(entry: Entry, links: ApprovalLinks): string {
  const mark = "after_break" in entry && entry.after_break ? "  [after the break: not verified]" : "";
  return match(entry)
    .with({ kind: "session" }, (e) => {
      const keyId = KeyId.of(Buffer.from(e.public_key, "hex"));
      const lines = [`session ${e.session_index} (line ${e.line})${mark}`, `  key_id      ${keyId}`, `  public_key  ${e.public_key}`];
      if (e.prev_session_tail !== undefined) lines.push(`  follows     ${e.prev_session_tail}`);
      if (e.time !== undefined) lines.push(`  opened      ${e.time}`);
      if (e.confinement !== undefined) lines.push(...confinementLines(e.confinement));
      return lines.join("\n");
    })
    .with({ kind: "call" }, (e) => renderCall(e, links, mark))
    .with({ kind: "decision" }, (e) => {
      const parked = links.parkedBy.get(e.record.approval_id);
      return [
        `  decision ${e.record.approval_id}  ${describePosition(e.at)}${mark}`,
        `    verdict     ${approvalText(e.record.verdict)}`,
        ...(e.record.time === undefined ? [] : [`    time        ${e.record.time}`]),
        `    answers     ${parked === undefined ? "no park for this approval in this file" : `call ${parked.call_id} (${describePosition(parked.at)})`}`,
      ].join("\n");
    })
    .with({ kind: "close" }, (e) => `  close  ${describePosition(e.at)}${e.time === undefined ? "" : `  ${e.time}`}${mark}`)
    .with({ kind: "other" }, (e) =>
      [
        `  ${e.line_type === "checkpoint" ? "checkpoint (reserved)" : `line of unknown type \`${e.line_type}\``}  ${describePosition(e.at)} (line ${e.line})${mark}`,
        ...e.problems.map((p) => `    does not fit its type: ${p}`),
      ].join("\n"),
    )
    .with({ kind: "unreadable" }, (e) => `  line ${e.line} cannot be read: ${e.detail}`)
    .exhaustive(unmatched);
}

/** What the Session's server was held to (SPEC §17.11): the mechanism, then each grant. */
function confinementLines(c: Confinement): string[] {
  const held =
    c.mechanism === "none" ? "none: the server was NOT confined (best effort)" : `${c.mechanism} ${c.version}${c.best_effort ? " (best effort)" : ""}`;
  const list = (items: readonly string[]): string => (items.length === 0 ? "nothing" : items.map(quoteIfNeeded).join(", "));
  return [
    `  confined    ${held}`,
    `    read      ${list(c.read)}`,
    `    write     ${list(c.write)}`,
    `    net       ${list(c.net)}`,
    `    exec      ${c.exec_support ? "/usr /lib /lib64 /lib32 /bin /sbin /etc, a /dev and a /proc of its own" : "nothing granted to start a program"}`,
    ...(c.not_enforced.length === 0 ? [] : [`    NOT enforced: ${c.not_enforced.join(", ")}`]),
  ];
}

/** A path or destination as the record holds it, quoted when it holds what a terminal could act on. */
function quoteIfNeeded(text: string): string {
  return /^[\x21-\x7e]+$/.test(text) && !text.includes(",") ? text : JSON.stringify(text);
}

function renderCall(e: Extract<Entry, { kind: "call" }>, links: ApprovalLinks, mark: string): string {
  const where = [
    e.intent === undefined ? undefined : `intent ${describePosition(e.intent.at)}`,
    e.outcome === undefined ? undefined : `outcome ${describePosition(e.outcome.at)}`,
  ]
    .filter((x) => x !== undefined)
    .join(", ");
  const head = `  call ${e.call_id}  ${e.tool_id}${mark}`;
  const rows: [string, string][] = [["at", where]];
  const o = e.outcome?.record;
  const time = callTime(e.intent?.time, o?.time);
  if (time !== undefined) rows.push(["time", time]);
  if (o === undefined) {
    rows.push(["outcome", "none: the call was in flight when this Session ended"]);
    rows.push(["request", e.request_digest]);
    return [head, ...rows.map(([k, v]) => `    ${k.padEnd(12)}${v}`)].join("\n");
  }
  // SPEC §14.11: an access record's read says which bytes, who, and why.
  if (o.envelope_access !== undefined) {
    rows.push(["reads", o.envelope_access.digest]);
    rows.push(["reader", `${o.envelope_access.os_user}, key_id ${o.envelope_access.reader_key_id}`]);
    rows.push(["reason", o.envelope_access.reason]);
  }
  rows.push(["policy", policyText(o)]);
  if (o.decision_axes.matched_rule !== undefined) rows.push(["rule", o.decision_axes.matched_rule]);
  const axes = [
    o.decision_axes.capability === undefined ? undefined : `capability ${o.decision_axes.capability}`,
    o.decision_axes.role === undefined ? undefined : `role ${o.decision_axes.role}`,
    o.decision_axes.session === undefined ? undefined : `session ${o.decision_axes.session}`,
  ].filter((x) => x !== undefined);
  rows.push(["axes", axes.length === 0 ? "none recorded" : axes.join(", ")]);
  if (o.decision_axes.fs !== undefined) rows.push(["fs", `${o.decision_axes.fs.path_raw} -> ${o.decision_axes.fs.path_canonical}`]);
  if (o.decision_axes.net !== undefined) rows.push(["net", `${o.decision_axes.net.host}:${o.decision_axes.net.port}`]);
  rows.push(["capability", capabilityText(o)]);
  rows.push(["execution", executionText(o)]);
  if (o.grant_id !== undefined) rows.push(["grant", o.grant_id]);
  if (o.continues_call !== undefined) rows.push(["continues", `call ${o.continues_call}, whose answer asked the client for input`]);
  rows.push(["request", o.request_digest]);
  if (o.response_digest !== undefined) rows.push(["response", o.response_digest]);
  rows.push(["policy set", o.policy_set_hash]);
  if (o.policy.status === "pending_approval") {
    const decided = links.decidedAt.get(o.policy.approval_id);
    rows.push([
      "approval",
      `${o.policy.approval_id}: ${decided === undefined ? "no decision in this file" : `${approvalText(decided.verdict)} at ${describePosition(decided.at)}`}`,
    ]);
  }
  if (o.decision_axes.approval_ref !== undefined) {
    const parked = links.parkedBy.get(o.decision_axes.approval_ref);
    rows.push([
      "resumes",
      `${o.decision_axes.approval_ref}${parked === undefined ? "" : ` (parked by call ${parked.call_id} at ${describePosition(parked.at)})`}`,
    ]);
  }
  return [head, ...rows.map(([k, v]) => `    ${k.padEnd(12)}${v}`)].join("\n");
}

/** When a call began (its intent's time) and how long until its outcome, from what the Lines say. */
function callTime(begun: string | undefined, ended: string | undefined): string | undefined {
  if (begun === undefined) return ended === undefined ? undefined : `${ended} (outcome)`;
  if (ended === undefined) return begun;
  return `${begun}, outcome ${Date.parse(ended) - Date.parse(begun)} ms later`;
}

export function policyText(o: OutcomeLine): string {
  return match(o.policy)
    .with({ status: "allowed" }, () => "allowed")
    .with({ status: "denied" }, (p) => `denied: ${p.reason}`)
    .with({ status: "rate_limited" }, (p) => `rate limited: ${p.reason}`)
    .with({ status: "pending_approval" }, (p) => `parked for approval ${p.approval_id}`)
    .exhaustive(unmatched);
}

/**
 * A call aegis wrap relayed: its grant is the pass-through one (SPEC §17.2), every ceiling 0,
 * no fs, no net. wrap mints no authority and confines nothing, and says so, rather than
 * showing ceilings of 0 that no one enforced.
 */
function relayed(o: OutcomeLine): boolean {
  if (o.capability.status !== "granted") return false;
  const g = o.capability.grant;
  return (
    g.grant_id.startsWith("wrap-passthrough-") &&
    g.max_memory_bytes === 0 &&
    g.max_wall_ms === 0 &&
    g.max_output_bytes === 0 &&
    g.fs === undefined &&
    g.net === undefined
  );
}

function capabilityText(o: OutcomeLine): string {
  return match(o.capability)
    .with({ status: "granted" }, (c) =>
      relayed(o)
        ? `granted ${c.grant.grant_id} for ${c.grant.tool_id}; no limits: aegis wrap relays the call and confines nothing`
        : `granted ${grantText(c.grant)}`,
    )
    .with({ status: "denied" }, (c) => `denied: ${c.reason}${c.denied_capability === undefined ? "" : ` (${c.denied_capability})`}`)
    .exhaustive(unmatched);
}

export function executionText(o: OutcomeLine): string {
  const base = match(o.execution)
    .with({ status: "success" }, () => "success")
    .with({ status: "trap" }, (x) => `trap: ${x.message}`)
    .with({ status: "resource_exceeded" }, (x) => `resource exceeded: ${x.kind}`)
    .with({ status: "host_denied" }, (x) => `not run: ${x.reason}`)
    .exhaustive(unmatched);
  const metrics = [
    o.wall_ms === undefined ? undefined : `${o.wall_ms} ms`,
    // wrap does not meter the server: its 0 is "not measured" (SPEC §17.2).
    o.peak_memory_bytes === undefined ? undefined : relayed(o) && o.peak_memory_bytes === 0 ? "memory not measured" : `peak ${o.peak_memory_bytes} B`,
  ].filter((x) => x !== undefined);
  return metrics.length === 0 ? base : `${base} (${metrics.join(", ")})`;
}

function grantText(g: CapabilityGrant): string {
  const parts = [`${g.grant_id} for ${g.tool_id}`];
  if (g.fs !== undefined) parts.push(fsText(g.fs));
  if (g.net !== undefined) parts.push(netText(g.net));
  parts.push(`limits ${g.max_memory_bytes} B memory, ${g.max_wall_ms} ms, ${g.max_output_bytes} B output`);
  return parts.join("; ");
}

function fsText(fs: FsGrant): string {
  return `fs read [${fs.read_paths.join(", ")}] write [${fs.write_paths.join(", ")}]`;
}

function netText(net: NetGrant): string {
  return `net ${net.http.map((h) => `${h.methods.join("/")} ${h.host}:${h.ports.join("/")}`).join(", ")}`;
}

function approvalText(v: ApprovalVerdict): string {
  return match(v)
    .with({ verdict: "approved" }, (a) => {
      const scope = [
        `tool ${a.scope.tool_id}`,
        a.scope.fs === undefined ? undefined : fsText(a.scope.fs),
        a.scope.net === undefined ? undefined : netText(a.scope.net),
      ].filter((x) => x !== undefined);
      return `approved, scope ${scope.join("; ")}`;
    })
    .with({ verdict: "denied" }, (d) => `denied: ${d.reason}`)
    .exhaustive(unmatched);
}
