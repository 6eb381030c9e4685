import type { Account } from "../account.js";
import type { Cells, RowClass } from "./cells.js";
import { h } from "./dom.js";

/** What the person asked to see. */
interface Choice {
  readonly kind: RowClass | "all";
  readonly tool: string | undefined;
  readonly session: string | undefined;
  readonly callId: string;
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
 * The filters (denied, parked, errors, one tool, one Session) and the search by call id.
 * `onChange` is given the indexes of the rows that pass, in file order.
 */
export function renderFilters(account: Account, cells: readonly Cells[], onChange: (rows: readonly number[], total: number) => void): HTMLElement {
  const kind = select("filter-kind", "Show", KINDS);
  const tool = select("filter-tool", "Tool", [["", "Every tool"], ...account.tools.map((t): [string, string] => [t, t])]);
  const session = select("filter-session", "Session", [
    ["", "Every Session"],
    ...account.sessions.map((s): [string, string] => [String(s.session_index), `Session ${s.session_index}`]),
  ]);
  const search = h("input", { type: "search", id: "search-call", placeholder: "call id", autocomplete: "off", spellcheck: false });
  const apply = (): void => {
    const choice: Choice = {
      kind: kind.control.value as RowClass | "all",
      tool: tool.control.value === "" ? undefined : tool.control.value,
      session: session.control.value === "" ? undefined : session.control.value,
      callId: search.value.trim(),
    };
    const rows: number[] = [];
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i];
      if (c !== undefined && passes(c, choice)) rows.push(i);
    }
    onChange(rows, cells.length);
  };
  for (const control of [kind.control, tool.control, session.control]) control.addEventListener("change", apply);
  search.addEventListener("input", apply);
  apply();
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter the rows" },
    kind.label,
    tool.label,
    session.label,
    h("label", { for: "search-call" }, "Call id ", search),
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
  return true;
}

function select(
  id: string,
  text: string,
  options: readonly (readonly [string, string])[],
): { readonly label: HTMLElement; readonly control: HTMLSelectElement } {
  const control = h("select", { id }, ...options.map(([value, shown]) => h("option", { value }, shown)));
  return { label: h("label", { for: id }, `${text} `, control), control };
}
