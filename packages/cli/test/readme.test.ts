import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, aegis } from "./support.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe("README", () => {
  it.each(["verify", "recheck", "envelope verify", "envelope get", "envelope redact", "envelope pack", "vectors", "keygen", "show", "demo", "wrap", "approve"])(
    "holds `aegis %s --help` exactly as the command prints it",
    (command) => {
      const help = aegis([...command.split(" "), "--help"]).stdout.trimEnd();
      expect(readme).toContain(`\`\`\`\n${help}\n\`\`\``);
    },
  );

  it("Quick start holds exactly two commands: the demo and the tests", () => {
    const quick = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(quick.trim().split("\n")).toEqual(["npm ci && npm run demo", "npm test"]);
  });

  it("documents every member of the verify --json document", () => {
    const doc = JSON.parse(aegis(["verify", "--json", join(ROOT, "vectors/chains/verified_unpinned.aarl")]).stdout) as Record<string, unknown>;
    for (const key of Object.keys(doc)) expect(readme, key).toContain(`| \`${key}\` |`);
  });
});
