import { axesName, parseHostFilter, parsePathFilter, type AxisFilter, type AxisFilterParse } from "@aegis/cli/browser";
import type { Account } from "../account.js";
import type { Cells, RowClass } from "./cells.js";
import { h } from "./dom.js";

/** What the person asked to see. */
interface Choice {
  readonly kind: RowClass | "all";
  readonly tool: string | undefined;
  readonly session: string | undefined;
  readonly callId: string;
  /** `aegis show --path` and `--host`: the calls whose decision axes name these (SPEC §13.4). */
  readonly touched: readonly AxisFilter[];
  /** A path or host was typed that does not parse: no row passes. */
  readonly refused: boolean;
}

const KINDS: readonly [RowClass | "all", string][] = [
  ["all", "Every row"],
  ["call", "Calls"],
  ["denied", "Denied"],
  ["parked", "Parked for approval"],
  ["error", "Ended in an error"],
  ["in_flight", "In flight"],
];

/**
 * The filters (denied, parked, errors, one tool, one Session, a path, a host) and the search
 * by call id. `onChange` is given the indexes of the rows that pass, in file order.
 */
export function renderFilters(account: Account, cells: readonly Cells[], onChange: (rows: readonly number[], total: number) => void): HTMLElement {
  const kind = select("filter-kind", "Show", KINDS);
  const tool = select("filter-tool", "Tool", [["", "Every tool"], ...account.tools.map((t): [string, string] => [t, t])]);
  const session = select("filter-session", "Session", [
    ["", "Every Session"],
    ...account.sessions.map((s): [string, string] => [String(s.session_index), `Session ${s.session_index}`]),
  ]);
  const search = h("input", { type: "search", id: "search-call", placeholder: "call id", autocomplete: "off", spellcheck: false });
  const path = axisInput("filter-path", "Path", "/etc", parsePathFilter);
  const host = axisInput("filter-host", "Host", "example.com:443", parseHostFilter);
  const apply = (): void => {
    const choice: Choice = {
      kind: kind.control.value as RowClass | "all",
      tool: tool.control.value === "" ? undefined : tool.control.value,
      session: session.control.value === "" ? undefined : session.control.value,
      callId: search.value.trim(),
      touched: [path.read(), host.read()].flatMap((r) => (r.code === "filter" ? [r.filter] : [])),
      refused: path.read().code === "refused" || host.read().code === "refused",
    };
    const rows: number[] = [];
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i];
      if (c !== undefined && passes(c, choice)) rows.push(i);
    }
    onChange(rows, cells.length);
  };
  for (const control of [kind.control, tool.control, session.control]) control.addEventListener("change", apply);
  for (const input of [search, path.input, host.input]) input.addEventListener("input", apply);
  apply();
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter the rows" },
    kind.label,
    tool.label,
    session.label,
    h("label", { for: "search-call" }, "Call id ", search),
    path.label,
    host.label,
    path.problem,
    host.problem,
  );
  // Enter in the search box filters, as typing does; it must not submit (and reload) the page.
  form.addEventListener("submit", (event) => event.preventDefault());
  return form;
}

function passes(c: Cells, choice: Choice): boolean {
  if (choice.kind !== "all" && !c.classes.has(choice.kind)) return false;
  if (choice.tool !== undefined && c.tool !== choice.tool) return false;
  if (choice.session !== undefined && c.session !== choice.session) return false;
  if (choice.callId !== "" && !(c.classes.has("call") && c.what.includes(choice.callId))) return false;
  if (choice.refused) return false;
  const axes = c.axes;
  if (choice.touched.length > 0 && (axes === undefined || !choice.touched.every((f) => axesName(axes, f)))) return false;
  return true;
}

type AxisRead = { readonly code: "none" } | { readonly code: "filter"; readonly filter: AxisFilter } | { readonly code: "refused" };

/**
 * A text box read as `aegis show` reads its option. What does not parse is said beside the
 * filters, and then matches nothing, so that a mistyped path never looks like "no call".
 */
function axisInput(
  id: string,
  text: string,
  example: string,
  parse: (text: string) => AxisFilterParse,
): { readonly label: HTMLElement; readonly input: HTMLInputElement; readonly problem: HTMLElement; read(): AxisRead } {
  const input = h("input", { type: "search", id, placeholder: example, autocomplete: "off", spellcheck: false, "aria-describedby": `${id}-problem` });
  const problem = h("p", { id: `${id}-problem`, class: "filter-problem", role: "status", "aria-live": "polite" });
  problem.hidden = true;
  return {
    label: h("label", { for: id }, `${text} `, input),
    input,
    problem,
    read(): AxisRead {
      const value = input.value.trim();
      const parsed = value === "" ? undefined : parse(value);
      problem.hidden = parsed === undefined || parsed.ok;
      problem.textContent = parsed === undefined || parsed.ok ? "" : `${text}: ${parsed.detail}`;
      if (parsed === undefined) return { code: "none" };
      return parsed.ok ? { code: "filter", filter: parsed.filter } : { code: "refused" };
    },
  };
}

function select(
  id: string,
  text: string,
  options: readonly (readonly [string, string])[],
): { readonly label: HTMLElement; readonly control: HTMLSelectElement } {
  const control = h("select", { id }, ...options.map(([value, shown]) => h("option", { value }, shown)));
  return { label: h("label", { for: id }, `${text} `, control), control };
}
