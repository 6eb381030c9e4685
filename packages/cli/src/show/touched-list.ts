import { describePosition } from "@aegis/format/internal";
import type { Entry } from "./entries.js";
import { policyText, executionText } from "./render.js";
import { axesName, describeFilter, type AxisFilter } from "./touched.js";

type CallEntry = Extract<Entry, { kind: "call" }>;

/**
 * The calls `aegis show --path/--host` lists: those with an outcome (only an outcome carries
 * decision axes, SPEC §5.3) whose axes name what every filter looks for.
 */
export function touches(entry: Entry, filters: readonly AxisFilter[]): entry is CallEntry & { readonly outcome: NonNullable<CallEntry["outcome"]> } {
  if (entry.kind !== "call" || entry.outcome === undefined) return false;
  const axes = entry.outcome.record.decision_axes;
  return filters.every((f) => axesName(axes, f));
}

/**
 * One call in one line: where it is, when it began (its intent's time, else its outcome's,
 * as the Lines say: SPEC §13.7), the tool and what it touched, the policy verdict with the
 * rule, and how it ran. Deterministic: what the file says, nothing of the clock.
 */
export function touchedLine(entry: CallEntry & { readonly outcome: NonNullable<CallEntry["outcome"]> }): string {
  const o = entry.outcome.record;
  const axes = o.decision_axes;
  const things = [
    axes.fs === undefined ? undefined : axes.fs.path_canonical,
    axes.net === undefined ? undefined : `${axes.net.host.includes(":") ? `[${axes.net.host}]` : axes.net.host}:${axes.net.port}`,
  ].filter((x) => x !== undefined);
  const rule = axes.matched_rule === undefined ? "" : ` (rule ${axes.matched_rule})`;
  const mark = entry.after_break ? "  [after the break: not verified]" : "";
  const time = entry.intent?.time ?? o.time ?? "-";
  return `call ${entry.call_id}  ${describePosition(entry.outcome.at)}  ${time}  ${entry.tool_id} ${things.join(" ")}  ${policyText(o)}${rule}  ${executionText(o)}${mark}`;
}

/** The last line of the text listing: how many calls named it, of how many with an outcome. */
export function touchedSummary(matched: number, calls: number, filters: readonly AxisFilter[]): string {
  return `${matched} of ${calls} call${calls === 1 ? "" : "s"} named ${filters.map(describeFilter).join(" and ")}`;
}

/** The `filter` member of `aegis show --json` with `--path`/`--host`. */
export function filterJson(filters: readonly AxisFilter[]): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const f of filters) {
    if (f.code === "path") doc["path"] = f.path;
    else doc["host"] = { host: f.host, port: f.port ?? null };
  }
  return doc;
}
