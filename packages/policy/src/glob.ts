/**
 * The path glob of version 2 Policy Sets (SPEC §15.2), matched against the whole of
 * `decision_axes.fs.path_canonical`:
 *
 * - `?` one character other than `/`;
 * - `*` any run of characters other than `/`, possibly empty;
 * - `**` followed by `/`: any run of whole directories, possibly none (the glob `/a/`,
 *   `**`, `/b` matches `/a/b` and `/a/x/y/b`); `**` anywhere else: any run of characters,
 *   `/` included;
 * - every other character stands for itself. There are no classes, braces or escapes, so a
 *   glob never needs a second reading.
 *
 * Characters are Unicode code points; nothing is case-folded or normalized.
 */
export interface Glob {
  /** Whether the glob matches the whole of `path`. */
  test(path: string): boolean;
}

type Token =
  | { readonly code: "char"; readonly c: string }
  | { readonly code: "one" }
  /** `*`: a run of characters other than `/`. */
  | { readonly code: "star" }
  /** `**` not followed by `/`: any run of characters. */
  | { readonly code: "any" }
  /** A double star followed by a slash: nothing, or a run of characters that ends in a slash. */
  | { readonly code: "dirs" };

/**
 * Compile a glob to a matcher that runs in time proportional to the path's length times the
 * glob's: a set of positions in the glob advanced one code point at a time, never a
 * backtracking regular expression, since the path comes from an agent's call.
 */
export function compileGlob(glob: string): Glob {
  const tokens: Token[] = [];
  const chars = [...glob];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? "";
    if (c === "*" && chars[i + 1] === "*") {
      if (chars[i + 2] === "/") {
        tokens.push({ code: "dirs" });
        i += 2;
      } else {
        tokens.push({ code: "any" });
        i += 1;
      }
    } else if (c === "*") tokens.push({ code: "star" });
    else if (c === "?") tokens.push({ code: "one" });
    else tokens.push({ code: "char", c });
  }
  return { test: (path) => run(tokens, path) };
}

/**
 * States are 2k (at token k) and 2k+1 (inside a `dirs` token k, after a character that did
 * not end it). State 2n is the end.
 */
function run(tokens: readonly Token[], path: string): boolean {
  const n = tokens.length;
  let current = closure(tokens, new Set([0]));
  for (const c of path) {
    const next = new Set<number>();
    for (const state of current) {
      const k = state >> 1;
      const t = tokens[k];
      if (t === undefined) continue;
      switch (t.code) {
        case "char":
          if (c === t.c) next.add(2 * (k + 1));
          break;
        case "one":
          if (c !== "/") next.add(2 * (k + 1));
          break;
        case "star":
          if (c !== "/") next.add(2 * k);
          break;
        case "any":
          next.add(2 * k);
          break;
        case "dirs":
          next.add(2 * k + 1);
          if (c === "/") next.add(2 * (k + 1));
          break;
      }
    }
    if (next.size === 0) return false;
    current = closure(tokens, next);
  }
  return current.has(2 * n);
}

/** Add what is reachable without consuming: past a `*`, `**` or `dirs` token that matches nothing. */
function closure(tokens: readonly Token[], states: Set<number>): Set<number> {
  const out = new Set<number>();
  const stack = [...states];
  while (stack.length > 0) {
    const state = stack.pop() ?? 0;
    if (out.has(state)) continue;
    out.add(state);
    if ((state & 1) === 1) continue;
    const t = tokens[state >> 1];
    if (t !== undefined && (t.code === "star" || t.code === "any" || t.code === "dirs")) stack.push(state + 2);
  }
  return out;
}
