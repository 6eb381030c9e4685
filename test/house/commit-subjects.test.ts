import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "./sources.js";

const MAX_CHARACTERS = 72;
/** The last commit before issue 51 set the bound; subjects before it are history. */
const BEFORE_THE_BOUND = "31478868c4b2f38754b09644afcdcf5508a9bdae";
/** Two subjects over the bound that landed after it, on 2026-12-06; landed history is not rewritten. */
const LANDED_OVER = new Set(["794b792", "c460860"]);

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return undefined;
  }
}

// A checkout without its history (an unpacked tarball) has nothing to check.
const history = git(["rev-parse", "--is-inside-work-tree"])?.trim() === "true";

/** Issue 51: `git log --oneline` reads as a list; the why goes in the body. */
describe("the commit subjects", () => {
  it.skipIf(!history)(`since the bound was set, each is at most ${MAX_CHARACTERS} characters`, () => {
    // Newest first, down to the bound; a shallow clone stops where its history does.
    const log = git(["log", "--format=%H%x00%s", "HEAD"]) ?? "";
    const subjects = log
      .trimEnd()
      .split("\n")
      .map((line) => line.split("\0") as [string, string]);
    const end = subjects.findIndex(([hash]) => hash === BEFORE_THE_BOUND);
    const since = end === -1 ? subjects : subjects.slice(0, end);
    expect(since.length).toBeGreaterThan(0);
    const long = since
      .filter(([hash, subject]) => [...subject].length > MAX_CHARACTERS && !LANDED_OVER.has(hash.slice(0, 7)))
      .map(([hash, subject]) => `${hash.slice(0, 7)} (${[...subject].length}): ${subject}`);
    expect(long).toEqual([]);
  });
});
