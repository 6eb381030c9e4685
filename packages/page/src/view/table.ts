import { h, replaceChildren } from "./dom.js";
import type { Cells } from "./cells.js";
import { RowHeights } from "./row-heights.js";

/** A column of the table: its heading, and which cell it shows. */
export interface Column {
  readonly key: Exclude<keyof Cells, "classes" | "afterBreak" | "axes" | "recheckCode">;
  readonly title: string;
  /** Width as a CSS grid track. */
  readonly width: string;
}

/** A row of one line of text: what a row is taken to be until it has been shown and measured. */
const ROW_HEIGHT = 28;
/** Rows rendered beyond the visible ones, above and below, so scrolling shows no gap. */
const OVERSCAN = 12;

/**
 * A table of many rows (a record of 100,000 calls) that renders only the rows in view: a
 * grid (ARIA `grid`) the keyboard moves through with the arrow keys, Page Up/Down, Home and
 * End, and Enter opens the active row. Rows are given as indexes into the caller's list.
 */
export class VirtualTable {
  readonly element: HTMLElement;
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly body: HTMLElement;
  private rows: readonly number[] = [];
  /**
   * Each row shown is as tall as its cells' wrapped text (every word of a long denial can be
   * read), measured once it is laid out, and kept by the caller's index across filters.
   */
  private heights = new RowHeights(new Float64Array(0));
  private readonly measured = new Map<number, number>();
  private active = 0;
  private printing = false;
  /** Ends the window's listeners: a record dropped next gets a table of its own, and this one must let go. */
  private readonly listening = new AbortController();
  /**
   * Renders again whenever the viewport's size changes, being shown included: rows are
   * given before the table is on the page (so its height is not known yet), and a tall
   * window must not keep only the rows that fitted a guess.
   */
  private readonly resized = new ResizeObserver(() => this.render());

  constructor(
    private readonly columns: readonly Column[],
    private readonly cellsOf: (index: number) => Cells,
    private readonly onOpen: (index: number) => void,
    label: string,
  ) {
    const template = columns.map((c) => c.width).join(" ");
    const header = h(
      "div",
      { role: "row", class: "grid-row grid-head", style: `grid-template-columns: ${template}`, "aria-rowindex": 1 },
      ...columns.map((c) => h("div", { role: "columnheader", class: "cell" }, c.title)),
    );
    this.body = h("div", { class: "grid-body", role: "rowgroup" });
    this.spacer = h("div", { class: "grid-spacer" }, this.body);
    // The heading scrolls sideways with the rows (a narrow window scrolls the table), and stays on top.
    this.viewport = h("div", { class: "grid-viewport" }, h("div", { role: "rowgroup", class: "grid-heading" }, header), this.spacer);
    this.element = h("div", { role: "grid", "aria-label": label, tabindex: 0, class: "grid", "aria-rowcount": 1 }, this.viewport);
    this.viewport.addEventListener("scroll", () => this.render());
    this.element.addEventListener("keydown", (event) => this.key(event));
    this.element.addEventListener("click", (event) => {
      const row = event.target instanceof Element ? event.target.closest("[data-position]") : null;
      if (row === null) return;
      this.activate(Number(row.getAttribute("data-position")));
      this.open();
    });
    const signal = this.listening.signal;
    this.resized.observe(this.viewport);
    window.addEventListener("beforeprint", () => this.print(true), { signal });
    window.addEventListener("afterprint", () => this.print(false), { signal });
  }

  /** Stop listening to the window, so that the table, and the account its rows come from, can be collected. */
  dispose(): void {
    this.listening.abort();
    this.resized.disconnect();
  }

  /** Show these rows (indexes into the caller's list), in this order. */
  show(rows: readonly number[]): void {
    this.rows = rows;
    this.active = Math.min(this.active, Math.max(rows.length - 1, 0));
    this.element.setAttribute("aria-rowcount", String(rows.length + 1));
    this.heights = new RowHeights(Float64Array.from(rows, (index) => this.measured.get(index) ?? ROW_HEIGHT));
    this.resize();
    this.render();
  }

  private resize(): void {
    const total = this.heights.total();
    this.spacer.style.height = `${total}px`;
    // A short record leaves no empty box under it; a long one scrolls inside the table.
    this.viewport.style.height = `min(60vh, ${Math.max(total, 3 * ROW_HEIGHT) + (this.headingHeight() || ROW_HEIGHT) + 2}px)`;
  }

  /** Scroll to the row of the caller's index `index`, make it active and give the table focus. */
  reveal(index: number): boolean {
    const position = this.rows.indexOf(index);
    if (position < 0) return false;
    this.activate(position);
    this.element.focus();
    return true;
  }

  private activate(position: number): void {
    this.active = Math.max(0, Math.min(position, this.rows.length - 1));
    // Rendering measures the rows around the target, which may move it: look again until it
    // stays in view. A row is measured once, and each pass measures the rows it shows, so
    // this settles in a few passes; the bound is for a layout that never does.
    for (let pass = 0; pass < 10; pass++) {
      const scrollTop = this.viewport.scrollTop;
      const target = this.scrollFor(this.active, scrollTop);
      if (pass > 0 && target === scrollTop) return;
      this.viewport.scrollTop = target;
      this.render();
    }
  }

  /** Where to scroll so the row at `position` shows whole below the heading, or its start when it is taller than the view. */
  private scrollFor(position: number, scrollTop: number): number {
    const top = this.heights.top(position);
    const height = this.heights.height(position);
    const seen = this.seenHeight();
    if (top < scrollTop || height > seen) return top;
    if (top + height > scrollTop + seen) return top + height - seen;
    return scrollTop;
  }

  /** The height of the rows' part of the view, under the heading. */
  private seenHeight(): number {
    return Math.max(ROW_HEIGHT, this.viewport.clientHeight - this.headingHeight());
  }

  /** The row a page up or down from the active one: by the rows' heights, and at least one row. */
  private pageFrom(direction: 1 | -1): number {
    const top = this.heights.top(this.active);
    const target = this.heights.at(Math.max(0, top + direction * this.seenHeight()));
    return direction === 1 ? Math.max(target, this.active + 1) : Math.min(target, this.active - 1);
  }

  private open(): void {
    const index = this.rows[this.active];
    if (index !== undefined) this.onOpen(index);
  }

  private key(event: KeyboardEvent): void {
    if (event.key === "ArrowDown") this.activate(this.active + 1);
    else if (event.key === "ArrowUp") this.activate(this.active - 1);
    else if (event.key === "PageDown") this.activate(this.pageFrom(1));
    else if (event.key === "PageUp") this.activate(this.pageFrom(-1));
    else if (event.key === "Home") this.activate(0);
    else if (event.key === "End") this.activate(this.rows.length - 1);
    else if (event.key === "Enter" || event.key === " ") this.open();
    else return;
    event.preventDefault();
  }

  private render(): void {
    const total = this.rows.length;
    let first: number;
    let last: number;
    if (this.printing) {
      first = 0;
      last = Math.min(total, PRINTED_ROWS);
    } else {
      const top = this.viewport.scrollTop;
      // Not laid out yet: the observer renders again once it is; till then, the window's height.
      const height = this.viewport.clientHeight || window.innerHeight;
      first = Math.max(0, this.heights.at(top) - OVERSCAN);
      last = Math.min(total, this.heights.at(top + height) + 1 + OVERSCAN);
    }
    const template = this.columns.map((c) => c.width).join(" ");
    const rendered: HTMLElement[] = [];
    for (let position = first; position < last; position++) {
      const index = this.rows[position];
      if (index === undefined) continue;
      const cells = this.cellsOf(index);
      const id = `row-${position}`;
      const classes = [
        "grid-row",
        ...[...cells.classes].map((c) => `is-${c}`),
        cells.afterBreak ? "is-after-break" : "",
        cells.recheckCode === undefined ? "" : `recheck-${cells.recheckCode}`,
        position === this.active ? "is-active" : "",
      ];
      rendered.push(
        h(
          "div",
          {
            role: "row",
            id,
            class: classes.filter((c) => c !== "").join(" "),
            style: `grid-template-columns: ${template}; ${this.printing ? "" : `top: ${this.heights.top(position)}px`}`,
            "aria-rowindex": position + 2,
            "aria-selected": position === this.active,
            "data-position": position,
          },
          ...this.columns.map((c) => h("div", { role: "gridcell", class: `cell cell-${c.key}`, title: cells[c.key] }, cells[c.key])),
        ),
      );
    }
    replaceChildren(this.body, ...rendered);
    if (!this.printing) this.measure(rendered);
    if (total > 0) this.element.setAttribute("aria-activedescendant", `row-${this.active}`);
    else this.element.removeAttribute("aria-activedescendant");
  }

  /**
   * Take the height of each row just rendered, as laid out, and move the rows below any that
   * grew; the row at the top of the view stays where the reader sees it.
   */
  private measure(rendered: readonly HTMLElement[]): void {
    const anchor = this.heights.at(this.viewport.scrollTop);
    const into = this.viewport.scrollTop - this.heights.top(anchor);
    let changed = false;
    for (const row of rendered) {
      const position = Number(row.getAttribute("data-position"));
      const index = this.rows[position];
      // Unrounded: offsetHeight rounds, and rows would overlap or part by half a pixel.
      const height = row.getBoundingClientRect().height;
      // 0: not laid out (hidden); the estimate stands until it is.
      if (index === undefined || height === 0) continue;
      this.measured.set(index, height);
      if (this.heights.set(position, height)) changed = true;
    }
    if (!changed) return;
    for (const row of rendered) row.style.top = `${this.heights.top(Number(row.getAttribute("data-position")))}px`;
    this.resize();
    this.viewport.scrollTop = this.heights.top(anchor) + into;
  }

  private headingHeight(): number {
    return this.viewport.firstElementChild instanceof HTMLElement ? this.viewport.firstElementChild.offsetHeight : ROW_HEIGHT;
  }

  /** Printing shows the rows as a plain list, the first {@link PRINTED_ROWS} of those shown. */
  private print(on: boolean): void {
    this.printing = on;
    this.element.classList.toggle("is-printing", on);
    // The inline heights would hold the printed rows in one screenful of box.
    if (on) {
      this.viewport.style.height = "";
      this.spacer.style.height = "";
    } else this.resize();
    this.render();
  }
}

const PRINTED_ROWS = 5000;
