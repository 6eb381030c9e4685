import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, aegis } from "./support.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe("README", () => {
  it.each([
    "verify",
    "recheck",
    "envelope verify",
    "envelope get",
    "envelope redact",
    "envelope pack",
    "envelope expire",
    "vectors",
    "keygen",
    "repair",
    "checkpoint",
    "prove",
    "proof verify",
    "show",
    "demo",
    "wrap",
    "approve",
    "export",
  ])("holds `aegis %s --help` exactly as the command prints it", (command) => {
    const help = aegis([...command.split(" "), "--help"]).stdout.trimEnd();
    expect(readme).toContain(`\`\`\`\n${help}\n\`\`\``);
  });

  it("Quick start holds exactly two commands: the demo and the tests", () => {
    const quick = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(quick.trim().split("\n")).toEqual(["npm ci && npm run demo", "npm test"]);
  });

  it("documents every member of the verify --json document", () => {
    const doc = JSON.parse(aegis(["verify", "--json", join(ROOT, "vectors/chains/verified_unpinned.aarl")]).stdout) as Record<string, unknown>;
    for (const key of Object.keys(doc)) expect(readme, key).toContain(`| \`${key}\` |`);
  });

  it("names, in its SPEC-section table, files that exist and sections SPEC.md has", () => {
    const table = readme.slice(readme.indexOf("## Where each SPEC section lives"), readme.indexOf("## The `aegis` command"));
    const paths = [...table.matchAll(/`([a-z-]+\/(?:src|bindings)\/[^`]*)`/g)].map((m) => m[1] ?? "");
    expect(paths.length).toBeGreaterThan(40);
    for (const path of paths) expect(existsSync(join(ROOT, "packages", path)), path).toBe(true);
    const spec = readFileSync(join(ROOT, "SPEC.md"), "utf8");
    const sections = new Set([...spec.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]));
    for (const cited of table.matchAll(/§(\d+(?:\.\d+)?)/g)) expect(sections.has(cited[1]), `§${cited[1]}`).toBe(true);
  });
});
