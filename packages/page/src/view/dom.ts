/**
 * Building the page's elements. Text from the record only ever goes in as text (never as
 * markup): a record is evidence someone else wrote, and it must not be able to script the page.
 */

type Child = Node | string | undefined | false;

export interface Attributes {
  readonly [name: string]: string | number | boolean | undefined;
}

/** An element with attributes and children; `false`/`undefined` children are skipped. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: readonly Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** The element with this id, which the page's markup guarantees. */
export function byId<T extends HTMLElement>(id: string, kind: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`the page has no ${kind.name} #${id}`);
  return element;
}

/** Empty an element and put `children` in it. */
export function replaceChildren(parent: HTMLElement, ...children: readonly Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}
