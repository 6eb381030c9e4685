import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, aegis, tempDir } from "./support.js";

/**
 * What the README and docs/ say, held to what is true: the command reference to `--help`,
 * the tables to the files and SPEC sections that exist, the links to their targets, and
 * what a stranger could act on (no bare `npx aegis`, no claim that the packages are on npm).
 */

const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");
const readme = read("README.md");
const commands = read("docs/commands.md");

/** Every README of the repository (not under node_modules or build output), and every docs page. */
function pages(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (["node_modules", "dist", ".git", "coverage", "aegis-demo", "screenshots"].includes(entry.name)) continue;
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name === "README.md" || (dir.startsWith("docs") && entry.name.endsWith(".md")) || path === "CONTRIBUTING.md") found.push(path);
    }
  };
  walk("");
  return found.sort();
}

/** The commands `aegis --help` lists, by path (`envelope get`). */
function listedCommands(): string[] {
  return aegis(["--help"])
    .stdout.split("\n")
    .map((l) => /^ {2}aegis ((?:[a-z]+ ?)+?)(?= [-[<]|$)/.exec(l)?.[1]?.trim())
    .filter((c): c is string => c !== undefined);
}

describe("docs/commands.md", () => {
  const listed = listedCommands();

  it("has a command for each that aegis --help lists", () => {
    expect(listed.length).toBeGreaterThanOrEqual(17);
    expect(listed).toEqual(expect.arrayContaining(["verify", "report", "checkpoint", "prove", "proof verify", "envelope get", "wrap", "approve"]));
  });

  it.each(listedCommands())("holds `aegis %s --help` exactly as the command prints it (npm run docs:help rewrites it)", (command) => {
    const help = aegis([...command.split(" "), "--help"]).stdout.trimEnd();
    expect(commands).toContain(`<details><summary><code>aegis ${command} --help</code></summary>\n\n\`\`\`\n${help}\n\`\`\``);
  });

  it("documents every member of the verify --json document", () => {
    const doc = JSON.parse(aegis(["verify", "--json", join(ROOT, "vectors/chains/verified_unpinned.aarl")]).stdout) as Record<string, unknown>;
    for (const key of Object.keys(doc)) expect(commands, key).toContain(`| \`${key}\` |`);
  });

  it("shows the report command with every option the page's picture beside it needs", () => {
    const section = commands.slice(commands.indexOf("## `aegis report`"), commands.indexOf("## `aegis show`"));
    const command = /```sh\n([\s\S]*?)\n```/.exec(section)?.[1]?.replace(/\\\n\s*/g, "") ?? "";
    // The picture (docs/report-demo.png) shows Recheck, Envelope and Checkpoints rows: each needs its option.
    for (const option of ["--trust-store", "--policy", "--envelope", "--checkpoint"]) expect(command, option).toContain(`${option} `);
    const cwd = tempDir();
    expect(aegis(["demo"], { cwd }).status).toBe(0);
    const made = spawnSync("sh", ["-c", command.replace(/^aegis /, `${process.execPath} ${join(ROOT, "packages/cli/bin/aegis.js")} `)], {
      cwd,
      encoding: "utf8",
    });
    expect(made.status, made.stderr).toBe(0);
    expect(read(relative(ROOT, join(cwd, "report.html")))).toContain("session.checkpoint");
  });
});

describe("packages/cli/README.md", () => {
  it("names, in its table, every command aegis --help lists", () => {
    const table = read("packages/cli/README.md")
      .split("\n")
      .filter((l) => l.startsWith("| `aegis "));
    const named = table.flatMap((row) => {
      const [group, subs] = /^\| `aegis ([a-z]+(?: [a-z|\\]+)?)/.exec(row)?.[1]?.split(" ") ?? [];
      return subs === undefined || !subs.includes("|") ? [[group, subs].filter(Boolean).join(" ")] : subs.split("\\|").map((s) => `${group ?? ""} ${s}`);
    });
    for (const command of listedCommands()) expect(named, command).toContain(command);
  });
});

describe("aegis wrap --help", () => {
  it("starts servers as installed programs in its examples, never through npx (docs/mcp.md says why)", () => {
    const help = aegis(["wrap", "--help"]).stdout;
    expect(help).toContain("Examples");
    expect(help).not.toMatch(/\bnpx\b/);
  });
});

describe("README.md", () => {
  it("is a front door: at most 400 lines, what aegis is, status, install, a recipe per reader", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(400);
    const headings = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual(
      expect.arrayContaining([
        "Status",
        "Install",
        "Recipes",
        "A stranger verifying a record",
        "An operator rechecking",
        "A third party running the vectors",
        "A team wrapping an MCP server",
      ]),
    );
    expect(headings.indexOf("Status")).toBeLessThan(headings.indexOf("Install"));
    expect(headings.indexOf("Install")).toBeLessThan(headings.indexOf("Recipes"));
  });

  it("Quick start holds exactly two commands: the demo and the tests", () => {
    const quick = /## Quick start\n\nFor contributors, in a checkout:\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(quick.trim().split("\n")).toEqual(["npm ci && npm run demo", "npm test"]);
  });

  it("says where the bindings ship, and each place holds them", () => {
    expect(readme).toContain("`node_modules/@aegis/mcp/bindings/`");
    expect(readme).toContain("`packages/mcp/bindings/`");
    expect(existsSync(join(ROOT, "packages/mcp/bindings/server-filesystem.yaml"))).toBe(true);
    const mcp = JSON.parse(read("packages/mcp/package.json")) as { files: string[] };
    expect(mcp.files).toContain("bindings");
  });
});

describe("docs/", () => {
  it("docs/README.md lists every page of docs/", () => {
    const toc = read("docs/README.md");
    for (const page of readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md")) expect(toc, page).toContain(`](${page})`);
  });

  it("docs/spec-map.md names, in its SPEC-section table, files that exist and sections SPEC.md has", () => {
    const map = read("docs/spec-map.md");
    const table = map.slice(map.indexOf("## Where each SPEC section lives"));
    const paths = [...table.matchAll(/`([a-z-]+\/(?:src|bindings)\/[^`]*)`/g)].map((m) => m[1] ?? "");
    expect(paths.length).toBeGreaterThan(40);
    for (const path of paths) expect(existsSync(join(ROOT, "packages", path)), path).toBe(true);
    const spec = read("SPEC.md");
    const sections = new Set([...spec.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]));
    for (const cited of table.matchAll(/§(\d+(?:\.\d+)?)/g)) expect(sections.has(cited[1]), `§${cited[1]}`).toBe(true);
  });

  it("docs/library.md says ES modules only, and makes the project one before anything else", () => {
    const library = read("docs/library.md");
    expect(library.slice(0, 400)).toContain("**ES modules only**");
    const setup = /```sh\n([\s\S]*?)\n```/.exec(library)?.[1] ?? "";
    expect(setup.split("\n")).toEqual(["npm init -y", "npm pkg set type=module"]);
    // The two steps, run as written, make a project in which `import` works.
    const cwd = tempDir();
    for (const line of setup.split("\n")) expect(spawnSync("sh", ["-c", line], { cwd, encoding: "utf8" }).status, line).toBe(0);
    expect((JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")) as { type?: string }).type).toBe("module");
  });
});

describe("every README and docs page", () => {
  const all = pages();

  it("are found", () => {
    expect(all).toEqual(expect.arrayContaining(["README.md", "docs/commands.md", "docs/library.md", "packages/cli/README.md", "conformance/python/README.md"]));
  });

  it.each(pages())("%s: runs no bare `npx aegis`, and claims no npm publication", (page) => {
    const text = read(page);
    // npx with any flags, then the bare name: where it is not installed, npx runs the npm package
    // named `aegis`, which is not this one.
    expect(text).not.toMatch(/\bnpx(?:\s+-{1,2}[\w-]+(?:=\S+)?)*\s+["']?aegis\b/);
    // Installing or running @aegis/* from the registry: nothing of the scope is published.
    expect(text).not.toMatch(/\b(?:npx|npm\s+(?:install|i|add|exec)|pnpm\s+add|yarn\s+add)\b[^\n`]*\s@aegis\//);
    expect(text).not.toMatch(/\b(?:is|are)\s+(?:now\s+)?(?:on|published\s+(?:on|to))\s+npm\b/i);
  });

  it.each(pages())("%s: a block that packs into a folder makes it first, and git ignores it (issue 50.11)", (page) => {
    const ignored = read(".gitignore").split("\n");
    for (const block of read(page).matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
      const commands = block[1] ?? "";
      for (const m of commands.matchAll(/npm pack[^\n]*--pack-destination\s+(\S+)/g)) {
        const folder = m[1] ?? "";
        const made = commands.indexOf(`mkdir -p ${folder}`);
        expect(made, `${page}: mkdir -p ${folder} before npm pack`).toBeGreaterThanOrEqual(0);
        expect(made).toBeLessThan(m.index);
        expect(ignored, `${page}: ${folder}/ in .gitignore`).toContain(`/${folder}/`);
      }
    }
  });

  it.each(pages())("%s: every relative link reaches a file that exists", (page) => {
    const text = read(page).replace(/```[\s\S]*?```/g, "");
    for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      const target = m[1] ?? "";
      if (/^[a-z]+:/.test(target)) continue;
      expect(existsSync(join(ROOT, dirname(page), target)), `${page} links to ${target}`).toBe(true);
    }
  });

  it.each(pages())("%s: every repository path it names in code exists, and it asks for the Node the packages do", (page) => {
    const text = read(page);
    const named = [...text.matchAll(/`((?:\.drafts|\.ci|\.github|packages|docs|conformance|vectors|scripts|bench|adr|test|api)\/[^\s`*<>]+?)`/g)].map(
      (m) => m[1] ?? "",
    );
    for (const path of named) expect(existsSync(join(ROOT, path)), `${page} names ${path}`).toBe(true);
    // package.json's engines say >=20.11: so does every page that names a version.
    expect(text).not.toMatch(/\bNode(?:\.js)? 20(?:\+|\s+or\s+(?:later|newer|above))/);
  });

  it("the scan finds what it is for", () => {
    const bad = ["Run it with `npx aegis verify x.aarl`.", "npx --yes aegis wrap", "npm install --global @aegis/cli", "The packages are on npm."];
    const patterns = [
      /\bnpx(?:\s+-{1,2}[\w-]+(?:=\S+)?)*\s+["']?aegis\b/,
      /\b(?:npx|npm\s+(?:install|i|add|exec)|pnpm\s+add|yarn\s+add)\b[^\n`]*\s@aegis\//,
      /\b(?:is|are)\s+(?:now\s+)?(?:on|published\s+(?:on|to))\s+npm\b/i,
    ];
    for (const text of bad)
      expect(
        patterns.some((p) => p.test(text)),
        text,
      ).toBe(true);
    for (const fine of ["npx @modelcontextprotocol/server-filesystem /srv", "npm install ./packs/aegis-format-0.1.0.tgz", "not on npm yet"])
      expect(
        patterns.some((p) => p.test(fine)),
        fine,
      ).toBe(false);
  });
});
