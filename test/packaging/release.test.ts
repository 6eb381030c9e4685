import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { BUNDLE_NPM_SCRIPT, WORKSPACES, packArgs } from "./commands.js";

/**
 * The release workflow makes what a user installs with the commands the tests make it with:
 * the pack of packaging.test.ts, the bundle of one-file.test.ts, the publish of the dry run.
 * A release that packed or bundled differently would ship what no test has seen.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Step {
  readonly name?: string;
  readonly run?: string;
  readonly uses?: string;
  readonly if?: string;
  readonly env?: Record<string, string>;
}
interface Workflow {
  readonly on: { readonly push: { readonly tags: readonly string[] } };
  readonly permissions: Record<string, string>;
  readonly jobs: Record<string, { readonly steps: readonly Step[]; readonly container?: string }>;
}

const workflow = parse(readFileSync(join(ROOT, ".github/workflows/release.yml"), "utf8")) as Workflow;
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
const lines = steps.flatMap((step) => (step.run ?? "").split("\n").map((line) => line.trim()));

/** A GitHub tag filter pattern as a regular expression: enough of the syntax for ours (`[0-9]+`, `*`, `.`). */
function tagFilter(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/\./g, "\\.").replace(/\*/g, "[^/]*")}$`);
}

describe(".github/workflows/release.yml", () => {
  it("runs on a version tag, and on nothing else", () => {
    expect(Object.keys(workflow.on)).toEqual(["push"]);
    const filters = workflow.on.push.tags.map(tagFilter);
    expect(filters.some((f) => f.test("v0.1.0"))).toBe(true);
    for (const not of ["main", "v0.1", "0.1.0", "v0.1.0-rc.1x"])
      expect(
        filters.some((f) => f.test(not)),
        not,
      ).toBe(false);
  });

  it("checks that the tag is the packages' version, and runs CI before it makes anything", () => {
    const check = lines.findIndex((l) => l.includes("$GITHUB_REF_NAME") && l.includes("packages/cli/package.json"));
    const ci = lines.indexOf(".ci/run");
    const pack = lines.findIndex((l) => l.startsWith("npm pack"));
    expect(check).toBeGreaterThanOrEqual(0);
    expect(ci).toBeGreaterThan(check);
    expect(pack).toBeGreaterThan(ci);
  });

  it("packs with the packaging test's command, and bundles with npm run bundle, the one-file test's", () => {
    expect(lines).toContain(`npm ${packArgs("release").join(" ")} > release/packed.json`);
    expect(lines).toContain("npm run bundle");
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(manifest.scripts["bundle"]).toBe(BUNDLE_NPM_SCRIPT);
    expect(lines).toContain("cp dist/aegis.mjs packages/mcp/bindings/server-filesystem.yaml release/");
    expect(lines).toContain("cd release && sha256sum -- * > SHA256SUMS && cat SHA256SUMS");
  });

  it("publishes the packages the dry run checks, with provenance, only once publishing is switched on", () => {
    const publish = steps.filter((s) => (s.run ?? "").includes("npm publish"));
    expect(publish).toHaveLength(1);
    expect(publish[0]?.run?.trim()).toBe(`npm publish --provenance --access public ${WORKSPACES.join(" ")}`);
    expect(publish[0]?.if).toBe("vars.NPM_PUBLISH == 'true'");
    expect(workflow.permissions["id-token"]).toBe("write");
  });
});
