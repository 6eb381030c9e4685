import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT, STACK_TRACE, aegis, tempDir } from "./support.js";

/**
 * Issue 50, points 5 and 8: `aegis completion bash|zsh|fish` and the manual page. Each script
 * is loaded into the real shell (Debian's bash, zsh and fish; .ci/run installs the last two)
 * and asked what it completes; the page is rendered by man(1).
 */

/** The commands `aegis --help` lists (`envelope get`), and each one's flags as its `--help` lists them. */
function helpCommands(): Map<string, string[]> {
  const names = aegis(["--help"])
    .stdout.split("\n")
    .map((l) => /^ {2}aegis ((?:[a-z]+ ?)+?)(?= [-[<]|$)/.exec(l)?.[1]?.trim())
    .filter((c): c is string => c !== undefined);
  return new Map(
    names.map((name) => {
      const help = aegis([...name.split(" "), "--help"]).stdout;
      const options = help.slice(help.indexOf("\nOptions\n"), help.indexOf("\nDetails\n"));
      const flags = [...options.matchAll(/^ {2}((?:-[a-z],)?--[a-z-]+)/gm)].flatMap((m) => (m[1] ?? "").split(","));
      return [name, flags];
    }),
  );
}

const COMMANDS = helpCommands();
const shellPath = (name: string): string => {
  const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
  if (found === "") throw new Error(`these tests need ${name}: run .ci/run, or apt-get install ${name}`);
  return found;
};

function script(shell: string): string {
  const run = aegis(["completion", shell]);
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
}

describe("aegis completion", () => {
  it("lists every command aegis --help lists, and every flag of each, in each shell's script", () => {
    expect(COMMANDS.size).toBeGreaterThanOrEqual(20);
    expect(COMMANDS.get("verify")).toEqual(expect.arrayContaining(["--key", "-q", "--quiet", "--threads"]));
    for (const shell of ["bash", "zsh", "fish"]) {
      const text = script(shell);
      for (const [name, flags] of COMMANDS) {
        for (const word of name.split(" ")) expect(text, `${shell}: ${name}`).toMatch(new RegExp(`\\b${word}\\b`));
        for (const flag of flags) {
          const spelled = shell === "fish" ? (flag.startsWith("--") ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`) : flag;
          expect(text, `${shell}: ${name} ${flag}`).toContain(spelled);
        }
      }
    }
  });

  it("bash: completes commands, a group's second word, a command's flags, and shells", () => {
    const file = join(tempDir(), "aegis.bash");
    writeFileSync(file, script("bash"));
    const complete = (...words: string[]): string[] => {
      const line = `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _aegis; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const run = spawnSync(shellPath("bash"), ["-c", `source '${file}'\n${line}`], { encoding: "utf8" });
      expect(run.stderr).toBe("");
      return run.stdout.split("\n").filter((w) => w !== "");
    };
    expect(complete("aegis", "ver")).toEqual(["verify"]);
    expect(complete("aegis", "envelope", "")).toEqual(["verify", "get", "redact", "pack", "expire"]);
    expect(complete("aegis", "envelope", "get", "--")).toEqual(["--envelope", "--audit", "--signing-key", "--reason", "--help"]);
    expect(complete("aegis", "verify", "--th")).toEqual(["--threads"]);
    expect(complete("aegis", "wrap", "--allow-")).toEqual(["--allow-read", "--allow-write", "--allow-net", "--allow-exec-support"]);
    expect(complete("aegis", "completion", "")).toEqual(["bash", "zsh", "fish"]);
    // A group named after help: its second words; a value that is one of a few words: those.
    expect(complete("aegis", "help", "envelope", "")).toEqual(["verify", "get", "redact", "pack", "expire"]);
    expect(complete("aegis", "wrap", "--refusal", "")).toEqual(["tool-result", "reference"]);
    expect(complete("aegis", "export", "--format", "otlp-")).toEqual(["otlp-json"]);
    // After wrap's --, the server's command line: a command name, then bash's own (files).
    expect(complete("aegis", "wrap", "--audit", "a.aarl", "--", "bas")).toContain("bash");
    expect(complete("aegis", "wrap", "--", "bash", "")).toEqual([]);
    // A value a shell cannot know (a key in hex, a number) gets nothing, not file names; a directory, directories.
    expect(complete("aegis", "verify", "--key", "")).toEqual([]);
    expect(complete("aegis", "verify", "--threads", "")).toEqual([]);
    const dir = tempDir();
    mkdirSync(join(dir, "state"));
    writeFileSync(join(dir, "state.txt"), "");
    expect(complete("aegis", "witness", "serve", "--state", `${dir}/sta`)).toEqual([`${dir}/state`]);
    // A file name is bash's own default completion: nothing of ours.
    expect(complete("aegis", "verify", "sess")).toEqual([]);
  });

  it("fish: the same, through fish's own complete -C", () => {
    const file = join(tempDir(), "aegis.fish");
    writeFileSync(file, script("fish"));
    const complete = (line: string): string[] => {
      const run = spawnSync(shellPath("fish"), ["--no-config", "-c", `source '${file}'; complete -C'${line}'`], { encoding: "utf8" });
      expect(run.stderr).toBe("");
      return run.stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t")[0] ?? "");
    };
    expect(complete("aegis ver")).toEqual(["verify"]);
    expect(complete("aegis envelope ")).toEqual(["expire", "get", "pack", "redact", "verify"]);
    expect(complete("aegis envelope get --")).toEqual(["--audit", "--envelope", "--help", "--reason", "--signing-key"]);
    expect(complete("aegis verify --th")).toEqual(["--threads"]);
    expect(complete("aegis completion ")).toEqual(["bash", "fish", "zsh"]);
    expect(complete("aegis help envelope ")).toEqual(["expire", "get", "pack", "redact", "verify"]);
    expect(complete("aegis help envelope get ")).toEqual([]);
    expect(complete("aegis wrap --refusal ")).toEqual(["reference", "tool-result"]);
    expect(complete("aegis export --format ")).toEqual(["otlp", "otlp-json"]);
    expect(complete("aegis wrap --audit a.aarl -- bas")).toContain("bash");
    expect(complete("aegis verify --key ")).toEqual([]);
    // Once a command is named, files.
    const dir = tempDir();
    writeFileSync(join(dir, "session.aarl"), "");
    expect(complete(`aegis verify ${dir}/sess`)).toEqual([`${dir}/session.aarl`]);
  });

  it("zsh: Tab in an interactive zsh lists a group's subcommands with their descriptions, and completes a flag", () => {
    const fpath = tempDir();
    writeFileSync(join(fpath, "_aegis"), script("zsh"));
    expect(spawnSync(shellPath("zsh"), ["-n", join(fpath, "_aegis")]).status).toBe(0);
    const driver = fileURLToPath(new URL("./support/zsh-complete.zsh", import.meta.url));
    const tab = (line: string, pattern: string): string => {
      const run = spawnSync("timeout", ["30", shellPath("zsh"), "-f", driver, fpath, line, pattern], { encoding: "utf8" });
      expect(run.status, `${line}: ${run.stdout}${run.stderr}`).toBe(0);
      return run.stdout;
    };
    const listed = tab("aegis envelope ", "*verify*--*Check that the Envelope*");
    for (const sub of ["expire", "get", "pack", "redact", "verify"]) expect(listed).toMatch(new RegExp(`${sub} +-- `));
    expect(tab("aegis verify --thr", "*--threads*")).toContain("aegis verify --threads");
    expect(tab("aegis wrap --refusal tool-", "*tool-result*")).toContain("aegis wrap --refusal tool-result");
    expect(tab("aegis help envelope red", "*redact*")).toContain("aegis help envelope redact");
    // After wrap's --, a command name (a builtin here: zsh -f hashes no PATH for _command_names).
    expect(tab("aegis wrap --audit a.aarl -- zcompil", "*zcompile*")).toContain("-- zcompile");
    // A repeatable flag is offered again once given.
    expect(tab("aegis verify --key abc --ke", "*--key abc --key*")).toContain("aegis verify --key abc --key");
  });

  it("an unknown shell is a usage error naming the three", () => {
    const run = aegis(["completion", "tcsh"]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: unknown shell "tcsh": give one of bash, zsh, fish\nhelp: run `aegis completion --help` for usage and examples\n$/);
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });
});

describe("aegis help --man", () => {
  it("is aegis(1) in roff that man -l renders without a warning: every command and flag", () => {
    const page = aegis(["help", "--man"]);
    expect(page.status, page.stderr).toBe(0);
    expect(aegis(["man"]).stdout).toBe(page.stdout);
    const file = join(tempDir(), "aegis.1");
    writeFileSync(file, page.stdout);
    const shown = spawnSync("man", ["--warnings", "-l", file], { encoding: "utf8", env: { ...process.env, MANWIDTH: "100", MAN_KEEP_FORMATTING: "" } });
    expect(shown.status).toBe(0);
    expect(shown.stderr).toBe("");
    const text = shown.stdout.replace(/.\u0008/g, "");
    expect(text).toMatch(/^AEGIS\(1\) +User Commands +AEGIS\(1\)$/m);
    // Paragraphs, options and examples: no run of blank lines where a label ended in a newline.
    expect(text).not.toMatch(/\n\s*\n\s*\n\s*\n/);
    for (const [name, flags] of COMMANDS) {
      expect(text, name).toContain(`   aegis ${name}\n`);
      for (const flag of flags) expect(text, `${name} ${flag}`).toContain(flag);
    }
  });

  it("is packed with the CLI as man/aegis.1, the same bytes (npm run docs:help writes it)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "packages/cli/package.json"), "utf8")) as { man: string[]; files: string[] };
    expect(pkg.man).toEqual(["./man/aegis.1"]);
    expect(pkg.files).toContain("man");
    expect(readFileSync(join(ROOT, "packages/cli/man/aegis.1"), "utf8")).toBe(aegis(["man"]).stdout);
  });
});
