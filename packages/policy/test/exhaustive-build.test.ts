// Exhaustiveness is a property of the build, not a convention (CONTRIBUTING.md, ADR 0029): a
// union that gains a member no switch or match names must stop compiling. This test copies the
// real policy sources, plants a new member in two real unions (a rule's action, a path matcher),
// and runs the real compiler on the copy as a child process. It reads the built
// @aegis/format types (its dist), so `npm run build` first, as `npm test` does.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

const ACTION_LAST = `  | { readonly code: "pending_approval" };`;
const MATCHER_LAST = `  | { readonly code: "glob"; readonly glob: string; readonly matcher: Glob };`;

interface Compiled {
  readonly ok: boolean;
  readonly output: string;
}

/** A copy of packages/policy/src under a fresh directory, compiled with the repository's settings. */
function copyPolicy(): string {
  const dir = mkdtempSync(join(tmpdir(), "aegis-exhaustive-"));
  cpSync(join(ROOT, "packages", "policy", "src"), join(dir, "src"), { recursive: true });
  // The copy resolves @aegis/format and ts-pattern as the package does: through the workspace.
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ extends: join(ROOT, "tsconfig.base.json"), compilerOptions: { noEmit: true, rootDir: "src" }, include: ["src"] }),
  );
  return dir;
}

function compile(dir: string): Promise<Compiled> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, "-p", join(dir, "tsconfig.json"), "--pretty", "false"], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      resolve({ ok: error === null, output: `${stdout}${stderr}` });
    });
  });
}

function plant(dir: string, search: string, member: string): void {
  const path = join(dir, "src", "model.ts");
  const text = readFileSync(path, "utf8");
  // The union's last member ends in `;`: the planted one follows it and takes the `;`.
  expect(text.includes(search)).toBe(true);
  writeFileSync(path, text.replace(search, `${search.slice(0, -1)}\n  | ${member};`));
}

/** The compiler's errors in one source file, each with its indented continuation lines. */
function errorsIn(output: string, file: string): string {
  const blocks: string[] = [];
  for (const line of output.split("\n")) {
    if (/^\s/u.test(line)) blocks[blocks.length - 1] += ` ${line.trim()}`;
    else blocks.push(line);
  }
  return blocks.filter((block) => block.includes(`src/${file}(`) || block.includes(`src\\${file}(`)).join("\n");
}

describe("a union that gains a member fails the build (ADR 0029)", () => {
  let pristine = "";
  let planted = "";
  beforeAll(() => {
    pristine = copyPolicy();
    planted = copyPolicy();
    plant(planted, ACTION_LAST, `{ readonly code: "planted_action" }`);
    plant(planted, MATCHER_LAST, `{ readonly code: "planted_matcher"; readonly path: string }`);
  });
  afterAll(() => {
    for (const dir of [pristine, planted]) if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("the copy as it is compiles: the failure below is the planted members' alone", { timeout: 180_000 }, async () => {
    const result = await compile(pristine);
    expect(result.output).toBe("");
    expect(result.ok).toBe(true);
  });

  it(
    "a new action fails the checked switch and the ts-pattern match, each naming it; a new matcher fails the matcher switch",
    { timeout: 180_000 },
    async () => {
      const result = await compile(planted);
      expect(result.ok).toBe(false);
      // recheck.ts's switch over the action code: `default: return unreachable(action)` takes never.
      expect(errorsIn(result.output, "recheck.ts")).toMatch(/"planted_action".*not assignable to parameter of type 'never'/u);
      // decide.ts's match over the action: `.exhaustive` has no call signature while a member is unhandled.
      expect(errorsIn(result.output, "decide.ts")).toMatch(/NonExhaustiveError<.*"planted_action"/u);
      // select.ts's switch over the path matcher.
      expect(errorsIn(result.output, "select.ts")).toMatch(/"planted_matcher".*not assignable to parameter of type 'never'/u);
    },
  );
});
