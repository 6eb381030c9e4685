import { unmatched } from "@aegis/format/internal";
import type { ApprovedScope } from "@aegis/format";
import type { ListedArguments, ParkSummary } from "@aegis/mcp";
import { match } from "ts-pattern";

/**
 * `aegis approve --list` for a person (SPEC §17.5): each parked call with its tool, its
 * arguments and the scope an approval would record. The tool, the arguments and the paths
 * are the agent's words: they are shown as JSON strings with every character a terminal
 * could act on or hide text behind (controls, format and bidirectional marks, line and
 * paragraph separators, spaces other than U+0020) escaped as \uXXXX, so that what is shown
 * is what would be approved. The id and the time are wrap's words, but whatever listens at
 * the socket answers: they are shown as they came, those characters escaped the same way.
 */
export function renderParks(parks: readonly ParkSummary[]): string {
  if (parks.length === 0) return "no call is parked: nothing waits for an answer\n";
  const head = `${parks.length} ${parks.length === 1 ? "call" : "calls"} parked; approving one lets one retry of that very call (same tool, same arguments) run, within its scope\n`;
  return [head, ...parks.map(renderPark)].join("\n");
}

const INDENT = " ".repeat(13);

function renderPark(park: ParkSummary): string {
  const lines = [
    escapeHidden(park.approval_id),
    `  tool       ${quoted(park.tool_id)}`,
    `  rule       ${park.rule === null ? "(the Policy Set's default)" : quoted(park.rule)}`,
    `  parked at  ${escapeHidden(park.parked_at)}`,
    ...renderArguments(park.arguments),
    ...renderScope(park.scope),
  ];
  return `${lines.join("\n")}\n`;
}

function renderArguments(args: ListedArguments): string[] {
  return match(args)
    .with({ code: "none" }, () => ["  arguments  (none)"])
    .with({ code: "no_canonical_form" }, () => [
      "  arguments  (not shown: a string in them holds a lone surrogate, or they nest too deep; no retry can run under an approval)",
    ])
    .with({ code: "json" }, (a) => [
      `  arguments  ${escapeHidden(a.json)}`,
      ...(a.truncated ? [`${INDENT}[truncated: the first ${Buffer.byteLength(a.json)} of ${a.bytes} bytes shown; --json carries the same]`] : []),
    ])
    .exhaustive(unmatched);
}

function renderScope(scope: ApprovedScope): string[] {
  const grants = [
    `tool ${quoted(scope.tool_id)}`,
    ...(scope.fs?.read_paths ?? []).map((p) => `read ${quoted(p)}`),
    ...(scope.fs?.write_paths ?? []).map((p) => `write ${quoted(p)}`),
    ...(scope.net?.http ?? []).map((h) => `http ${quoted(h.host)} ${h.ports.length === 1 ? "port" : "ports"} ${h.ports.join(", ")}`),
  ];
  return grants.map((g, i) => (i === 0 ? `  scope      ${g}` : `${INDENT}${g}`));
}

/** `text` as a JSON string, its hidden characters escaped. */
function quoted(text: string): string {
  return escapeHidden(JSON.stringify(text));
}

/**
 * JSON text with every control, format, unassigned or private-use character and every
 * separator but U+0020 written as \uXXXX escapes. Outside its strings JSON text is ASCII, so
 * each is inside a string, and the text still reads as the same JSON value.
 */
export function escapeHidden(json: string): string {
  return json.replace(/[\p{C}\p{Z}]/gu, (c) =>
    c === " " ? c : [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}
