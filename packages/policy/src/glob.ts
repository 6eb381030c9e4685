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
export function compileGlob(glob: string): RegExp {
  let source = "";
  const chars = [...glob];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? "";
    if (c === "*" && chars[i + 1] === "*") {
      if (chars[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 2;
      } else {
        source += ".*";
        i += 1;
      }
    } else if (c === "*") {
      source += "[^/]*";
    } else if (c === "?") {
      source += "[^/]";
    } else {
      source += c.replace(/[.*+?^${}()|[\]\\/]/gu, "\\$&");
    }
  }
  return new RegExp(`^${source}$`, "su");
}
