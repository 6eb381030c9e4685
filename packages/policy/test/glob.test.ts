import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileGlob } from "../src/glob.js";
import { parsePolicySet } from "../src/index.js";
import { tryParsePolicySet } from "../src/internal.js";

/** The glob's meaning (SPEC §15.2) written as a regular expression: an oracle for short inputs only. */
function oracle(glob: string): RegExp {
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
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.*+?^${}()|[\]\\/]/gu, "\\$&");
  }
  return new RegExp(`^${source}$`, "su");
}

describe("path globs (SPEC §15.2)", () => {
  it("the linear matcher agrees with the glob's meaning on every short glob and path", () => {
    const piece = fc.constantFrom("a", "b", "/", "*", "**", "**/", "?", ".md");
    const pathPiece = fc.constantFrom("a", "b", "/", ".md", "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 7 }), fc.array(pathPiece, { maxLength: 9 }), (g, p) => {
        const glob = g.join("");
        const path = p.join("");
        expect(compileGlob(glob).test(path), `${glob} on ${path}`).toBe(oracle(glob).test(path));
      }),
      { numRuns: 3000 },
    );
  });

  it("a long path against stacked double stars is answered (a backtracking matcher would take seconds)", () => {
    const path = `/${"a/".repeat(20000)}b.txt`;
    expect(compileGlob("/**/a/**/a/**/a/**/*.md").test(path)).toBe(false);
    expect(compileGlob("/**/a/**/a/**/b.txt").test(path)).toBe(true);
  });
});

describe("found in review", () => {
  it("a lone surrogate in a string is refused with its path, not thrown", () => {
    const result = tryParsePolicySet('version: 1\nrules:\n  - { id: a, action: deny, tool: "\\ud800" }\n');
    expect(result).toEqual({ ok: false, problems: [expect.objectContaining({ code: "bad_value", path: "rules[0].tool" }) as unknown] });
  });

  it("hosts that differ only in ASCII case match alike, so they hash alike", () => {
    const set = (host: string) => parsePolicySet(`version: 2\nrules:\n  - { id: a, action: deny, net: { host: ${host} } }\n`);
    expect(set("A.Example").hash).toBe(set("a.example").hash);
    expect(set("b.example").hash).not.toBe(set("a.example").hash);
  });

  it("a %YAML directive for another version than 1.2 is refused, not read with 1.2's meanings", () => {
    const result = tryParsePolicySet("%YAML 1.1\n---\nversion: 1\nrules:\n  - { id: a, action: allow, tool: on }\n");
    expect(result).toEqual({ ok: false, problems: [expect.objectContaining({ code: "yaml_feature", feature: "yaml_version" }) as unknown] });
    expect(tryParsePolicySet("%YAML 1.2\n---\nversion: 1\nrules: []\n").ok).toBe(true);
  });
});
