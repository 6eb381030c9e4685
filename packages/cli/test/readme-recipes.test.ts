import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { BUNDLE_SCRIPT } from "../../../test/packaging/commands.js";
import { ROOT, tempDir } from "./support.js";

/**
 * The README's recipes, run as written: every `sh` block of a recipe in one shell, in the
 * recipe's folder, with `aegis` on PATH as the README installs it (a link named aegis to the
 * one file) and server-filesystem's bin beside it. The one liberty taken is the README's own:
 * paths under /home/you/ are the reader's, here a fresh folder and this checkout. A command
 * ending in `# exit N` must exit N; every other must exit 0. The wrap recipe's client
 * configuration is started as an MCP client would start it, with the real filesystem server.
 */

const README = readFileSync(join(ROOT, "README.md"), "utf8");

interface Block {
  readonly lang: string;
  readonly body: string;
}

/** The fenced blocks of the README section `### <title>` under `## Recipes`. */
function recipe(title: string): Block[] {
  const recipes = README.slice(README.indexOf("\n## Recipes\n"), README.indexOf("\n## ", README.indexOf("\n## Recipes\n") + 1));
  const start = recipes.indexOf(`\n### ${title}\n`);
  if (start < 0) throw new Error(`the README has no recipe "${title}"`);
  const end = recipes.indexOf("\n### ", start + 1);
  const section = recipes.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/\n```(\w+)\n([\s\S]*?)\n```\n/g)].map((m) => ({ lang: m[1] ?? "", body: m[2] ?? "" }));
}

let bin = "";
let agent = "";

/** The README's words with the reader's paths put in. */
function ours(text: string): string {
  return text.replaceAll("/home/you/agent", agent).replaceAll("/home/you/aegis-ts", ROOT.replace(/\/$/, ""));
}

/** A block as a script: each `cmd  # exit N` must exit N, the rest 0 (sh -e). */
function script(body: string): string {
  return ours(body)
    .split("\n")
    .map((line) => {
      const m = /^(.*\S)\s+# exit (\d+)$/.exec(line);
      return m === null
        ? line
        : `set +e; ${m[1] ?? ""}; code=$?; set -e; [ "$code" -eq ${m[2] ?? ""} ] || { echo "exit $code, not ${m[2] ?? ""}: ${m[1] ?? ""}" >&2; exit 97; }`;
    })
    .join("\n");
}

function env(): Record<string, string> {
  return { PATH: `${bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: agent, LANG: "C.UTF-8" };
}

function sh(body: string): { status: number | null; stdout: string; stderr: string } {
  // The wrap recipe makes its folder itself: until then it runs from the folder above.
  const cwd = existsSync(agent) ? agent : dirname(agent);
  const ran = spawnSync("sh", ["-e", "-c", script(body)], { cwd, encoding: "utf8", env: env(), maxBuffer: 1 << 26 });
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

function shBlocks(title: string): string[] {
  return recipe(title)
    .filter((b) => b.lang === "sh")
    .map((b) => b.body);
}

/** What a stranger or an operator was handed: the demo's files, made by the one file itself. */
function handed(...names: string[]): void {
  const demo = join(tempDir(), "demo");
  expect(sh(`aegis demo --out ${demo} > /dev/null`).status).toBe(0);
  for (const name of names) cpSync(join(demo, name), join(agent, name), { recursive: true });
}

beforeAll(() => {
  const work = tempDir();
  bin = join(work, "bin");
  mkdirSync(bin);
  const built = spawnSync(process.execPath, [join(ROOT, BUNDLE_SCRIPT), join(work, "lib/aegis.mjs")], { encoding: "utf8" });
  expect(built.status, built.stderr).toBe(0);
  // As the README's Install says: a link named aegis to the one file.
  symlinkSync(join(work, "lib/aegis.mjs"), join(bin, "aegis"));
  symlinkSync(join(ROOT, "node_modules/.bin/mcp-server-filesystem"), join(bin, "mcp-server-filesystem"));
}, 120_000);

describe("the README's recipes, as written", () => {
  it("a stranger verifying a record: the record, one call's proofs, the checkpoint, a report", () => {
    agent = tempDir();
    handed("session.aarl", "signing.pub", "session.checkpoint", "proofs");
    const blocks = shBlocks("A stranger verifying a record");
    expect(blocks).toHaveLength(3);
    const [verify, proofs, more] = blocks.map(sh);
    expect(verify?.status, verify?.stderr).toBe(0);
    expect(verify?.stdout).toMatch(/^Verified \(pinned to [0-9a-f]{64}\)\n/);
    expect(proofs?.status, proofs?.stderr).toBe(0);
    expect(proofs?.stdout.match(/: OK: Line \d+ of 15 /g)).toHaveLength(3);
    expect(more?.status, more?.stderr).toBe(0);
    expect(more?.stdout).toContain(": matches the record's first lines\n");
    expect(existsSync(join(agent, "report.html"))).toBe(true);
  }, 120_000);

  it("an operator rechecking: verify with the Envelope, recheck under the same and a stricter set, show one call", () => {
    agent = tempDir();
    handed("session.aarl", "session.envelope", "signing.pub", "policy.yaml", "policy-stricter.yaml");
    const blocks = shBlocks("An operator rechecking");
    expect(blocks).toHaveLength(1);
    const run = sh(blocks[0] ?? "");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Verified \(pinned to /);
    expect(run.stdout).toMatch(/^call call-4 session 0 seq \d+: newly_blocked was=pending_approval now=denied$/m);
    expect(run.stdout).toMatch(/^ {2}call call-4 {2}shell\.exec$/m);
  }, 120_000);

  it("a third party running the vectors: through aegis, and through the Python verifier", () => {
    agent = tempDir();
    const blocks = shBlocks("A third party running the vectors");
    expect(blocks).toHaveLength(1);
    const run = sh(blocks[0] ?? "");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.match(/^[1-9]\d* passed, 0 failed$/gm)).toHaveLength(2);
  }, 300_000);

  it("a team wrapping an MCP server: key, bindings, policy, the client's configuration with the real filesystem server, approval, recheck", async () => {
    agent = join(tempDir(), "agent");
    const blocks = recipe("A team wrapping an MCP server");
    expect(blocks.map((b) => b.lang)).toEqual(["sh", "json", "sh", "sh"]);
    const [setup, config, approvals, afterwards] = blocks.map((b) => b.body);

    const made = sh(setup ?? "");
    expect(made.status, made.stderr).toBe(0);
    expect(["signing.key", "signing.pub", "server-filesystem.yaml", "policy.yaml", "data/notes.md"].filter((f) => !existsSync(join(agent, f)))).toEqual([]);

    // The configuration, started as an MCP client starts a server.
    const server = (JSON.parse(ours(config ?? "")) as { mcpServers: { filesystem: { command: string; args: string[] } } }).mcpServers.filesystem;
    const transport = new StdioClientTransport({ command: server.command, args: server.args, env: env(), stderr: "pipe" });
    const stderr: string[] = [];
    transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: "readme-recipe", version: "1.0.0" });
    await client.connect(transport);
    // As a client does before it offers the tools to a model: wrap pins each definition it lists.
    expect((await client.listTools()).tools.length).toBeGreaterThan(5);
    const data = join(agent, "data");
    const read = await client.callTool({ name: "read_text_file", arguments: { path: join(data, "notes.md") } });
    expect(JSON.stringify(read.content)).toContain("ship on friday");
    const refusal = async (name: string, args: Record<string, unknown>): Promise<Record<string, string>> => {
      // A refusal is a tool result that erred (ADR 0021): the client returns it, it does not throw.
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name} was not refused`).toBe(true);
      const facts = (result._meta as Record<string, unknown> | undefined)?.["io.github.aegis-ts/refusal"];
      expect(facts).toBeTypeOf("object");
      return facts as Record<string, string>;
    };
    expect(await refusal("read_text_file", { path: "/etc/hostname" })).toMatchObject({ code: "POLICY_DENIED" });
    const plan = join(data, "plan.md");
    const parked = await refusal("write_file", { path: plan, content: "ship on monday\n" });
    expect(parked).toMatchObject({ code: "PENDING_APPROVAL", rule: "ask-before-writing" });
    const id = parked["approval_id"] ?? "";
    await vi.waitFor(() => expect(stderr.join("")).toContain(`parked for approval ${id}`), { timeout: 30_000, interval: 20 });
    expect(existsSync(plan)).toBe(false);

    const listed = sh(approvals ?? "");
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${id}\n  tool       "write_file"\n`);
    // The README's prose form: aegis approve <APPROVAL_ID> --control ...
    const approved = sh(`aegis approve ${id} --control ${join(agent, "session.aarl.control")}`);
    expect(approved.status, approved.stderr).toBe(0);
    await client.callTool({ name: "write_file", arguments: { path: plan, content: "ship on monday\n" } });
    expect(readFileSync(plan, "utf8")).toBe("ship on monday\n");
    await client.close();

    const after = sh(afterwards ?? "");
    expect(after.status, after.stderr).toBe(0);
    expect(after.stdout).toMatch(/^Verified \(pinned to /);
    expect((JSON.parse(readFileSync(join(agent, "tools-now.json"), "utf8")) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(5);
    expect(after.stdout.match(/; tool_spec unchanged$/gm)).toHaveLength(4);
  }, 180_000);
});
