import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SigningKey } from "@aegis/format";
import { writeKeyFile } from "@aegis/format/internal";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, aegis, aegisBounded, largeRecord, tempDir } from "./support.js";

const FILESYSTEM_SERVER = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

interface Listed {
  readonly entries: {
    readonly kind: string;
    readonly call_id: string;
    readonly tool_id: string;
    readonly outcome: { readonly record: Record<string, unknown> };
  }[];
  readonly filter: unknown;
  readonly matched: number;
  readonly calls: number;
}

/** The listed calls of a text listing: `call <id>  session ...  <tool> <thing>  ...`, as [id, tool, thing]. */
function listed(stdout: string): [string, string, string][] {
  return [...stdout.matchAll(/^call (\S+) {2}session \d+ seq \d+ {2}\S+ {2}(\S+) (\S+) {2}/gm)].map((m) => [m[1] ?? "", m[2] ?? "", m[3] ?? ""]);
}

/**
 * A Session recorded by `aegis wrap` in front of the real filesystem server, under a Policy
 * Set and bindings, so that each call's decision axes hold what wrap resolved: the
 * canonical path of a file tool, the host and port of a URL argument.
 */
async function recordedSession(): Promise<{ record: string; data: string; old: string }> {
  const dir = tempDir();
  const data = join(dir, "data");
  const old = join(dir, "data-old");
  mkdirSync(join(data, "work"), { recursive: true });
  mkdirSync(old);
  writeFileSync(join(data, "notes.md"), "ship on friday\n");
  writeFileSync(join(old, "a.md"), "old\n");
  const key = join(dir, "signing.key");
  await writeKeyFile(key, SigningKey.fromSeed(new Uint8Array(32).fill(9)));
  const policy = join(dir, "policy.yaml");
  writeFileSync(
    policy,
    `version: 2
default: deny
rules:
  - { id: read-data, action: allow, capability: fs.read, fs: { path_prefix: ${data}/ } }
  - { id: write-work, action: allow, capability: fs.write, fs: { path_prefix: ${data}/work/ } }
  - { id: fetch-api, action: allow, tool: fetch, net: { host: api.example.com } }
`,
  );
  // The bindings shipped for the server, and one tool that takes a URL: the server does not
  // know it and answers with an error, but wrap has bound and recorded the endpoint first.
  const bindings = join(dir, "bindings.yaml");
  writeFileSync(
    bindings,
    `${readFileSync(join(ROOT, "packages/mcp/bindings/server-filesystem.yaml"), "utf8")}  - tool: fetch\n    capability: net.get\n    net: { url: /params/arguments/url }\n`,
  );
  const record = join(dir, "session.aarl");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      "wrap",
      "--audit",
      record,
      "--signing-key",
      key,
      "--policy",
      policy,
      "--bindings",
      bindings,
      "--",
      process.execPath,
      FILESYSTEM_SERVER,
      data,
      old,
    ],
    stderr: "pipe",
  });
  const client = new Client({ name: "show-touched", version: "1.0.0" });
  await client.connect(transport);
  const calls: [string, Record<string, unknown>][] = [
    ["read_text_file", { path: join(data, "notes.md") }], // call-1: allowed
    ["write_file", { path: join(data, "work", "out.md"), content: "x" }], // call-2: allowed
    ["read_text_file", { path: join(old, "a.md") }], // call-3: denied, a sibling whose name starts with "data"
    ["write_file", { path: join(data, "notes.md"), content: "y" }], // call-4: denied, outside work/
    ["fetch", { url: "https://api.example.com/v1/items" }], // call-5: allowed, port 443
    ["fetch", { url: "http://API.example.com:8080/" }], // call-6: allowed, port 8080
    ["fetch", { url: "https://other.example/" }], // call-7: denied
    ["list_allowed_directories", {}], // call-8: no path, no endpoint
  ];
  for (const [name, args] of calls) await client.callTool({ name, arguments: args }).catch((error: unknown) => error);
  await client.close();
  return { record, data, old };
}

describe("aegis show --path and --host on a record written by aegis wrap in front of the filesystem server", () => {
  it("list exactly the calls whose decision axes name the path or host, in record order, with verdict, outcome and time", { timeout: 120_000 }, async () => {
    const { record, data, old } = await recordedSession();
    expect(aegis(["verify", record]).status).toBe(0);

    const underData = aegis(["show", "--path", data, record]);
    expect(underData.status, underData.stderr).toBe(0);
    expect(underData.stdout.startsWith("Verified (unpinned)\n")).toBe(true);
    expect(listed(underData.stdout)).toEqual([
      ["call-1", "read_text_file", join(data, "notes.md")],
      ["call-2", "write_file", join(data, "work", "out.md")],
      ["call-4", "write_file", join(data, "notes.md")],
    ]);
    // Each line carries the verdict and how the call ran, and when it began.
    const lines = underData.stdout.split("\n").filter((l) => l.startsWith("call "));
    expect(lines[0]).toMatch(/ {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}read_text_file \S+ {2}allowed \(rule read-data\) {2}success/);
    expect(lines[2]).toMatch(/ {2}write_file \S+ {2}denied: no matching rule \(default deny\) {2}not run: not executed$/);
    expect(underData.stdout.endsWith(`\n3 of 8 calls named path ${data}\n`)).toBe(true);

    // A file names itself; a trailing slash and `..` change nothing; the sibling is its own.
    expect(listed(aegis(["show", "--path", join(data, "notes.md"), record]).stdout).map(([id]) => id)).toEqual(["call-1", "call-4"]);
    expect(listed(aegis(["show", "--path", `${data}/work/../`, record]).stdout).map(([id]) => id)).toEqual(["call-1", "call-2", "call-4"]);
    expect(listed(aegis(["show", "--path", old, record]).stdout).map(([id]) => id)).toEqual(["call-3"]);
    expect(listed(aegis(["show", "--path", "/", record]).stdout).map(([id]) => id)).toEqual(["call-1", "call-2", "call-3", "call-4"]);

    const api = aegis(["show", "--host", "api.example.com", record]);
    expect(listed(api.stdout)).toEqual([
      ["call-5", "fetch", "api.example.com:443"],
      ["call-6", "fetch", "api.example.com:8080"],
    ]);
    expect(listed(aegis(["show", "--host", "api.example.com:8080", record]).stdout).map(([id]) => id)).toEqual(["call-6"]);
    const other = aegis(["show", "--host", "other.example", record]);
    expect(other.stdout).toMatch(/^call call-7 .* fetch other\.example:443 {2}denied: no matching rule \(default deny\) {2}not run: not executed$/m);
    const nobody = aegis(["show", "--host", "example.com", record]);
    expect(nobody.status).toBe(0);
    expect(listed(nobody.stdout)).toEqual([]);
    expect(nobody.stdout.endsWith("\n0 of 8 calls named host example.com, any port\n")).toBe(true);

    // --json: the same calls, as `aegis show --json` gives a call, with what was asked and the counts.
    const json = aegis(["show", "--json", "--path", data, record]);
    const doc = JSON.parse(json.stdout) as Listed;
    expect(doc.filter).toEqual({ path: data });
    expect(doc.entries.map((e) => [e.kind, e.call_id])).toEqual([
      ["call", "call-1"],
      ["call", "call-2"],
      ["call", "call-4"],
    ]);
    expect(doc.entries.map((e) => (e.outcome.record["decision_axes"] as { fs: { path_canonical: string } }).fs.path_canonical)).toEqual([
      join(data, "notes.md"),
      join(data, "work", "out.md"),
      join(data, "notes.md"),
    ]);
    expect([doc.matched, doc.calls]).toEqual([3, 8]);
    const hostDoc = JSON.parse(aegis(["show", "--json", "--host", "api.example.com:443", record]).stdout) as Listed;
    expect(hostDoc.filter).toEqual({ host: { host: "api.example.com", port: 443 } });
    expect(hostDoc.entries.map((e) => e.call_id)).toEqual(["call-5"]);
  });

  it("refuses a relative path, a bad port, and --call beside them, before reading anything", () => {
    for (const [args, message] of [
      [["--path", "data"], /^error: --path: a path must be absolute/],
      [["--host", "example.com:70000"], /^error: --host: a port is a decimal integer from 0 to 65535/],
      [["--path", "/etc", "--call", "call-1"], /^error: --call shows one call; --path and --host list the calls that touched a thing/],
    ] as const) {
      const run = aegis(["show", ...args, "/nonexistent/record.aarl"]);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(message);
    }
  });
});

describe("aegis show --path streams", () => {
  it("in flat memory: a record of 120,000 Lines costs what one of 20,000 does", { timeout: 300_000 }, async () => {
    const dir = tempDir();
    const small = join(dir, "small.aarl");
    const large = join(dir, "large.aarl");
    // Both hold over 8,192 signatures, so that the verification before the listing starts the
    // same signature threads in both (SPEC §13.4): what differs is the record's length.
    await largeRecord(small, 20_000);
    await largeRecord(large, 120_000);
    // Every call of these records read /workspace/notes.md: each is listed, none held.
    // V8's old space capped: an entry held per call (over a KiB each) would not fit 60,000 of
    // them and the run would fail; what is left to compare is the rest of the process. The
    // listing runs in 24 MiB at either length (2026-12-07).
    const runs = [small, large].map((path) => aegisBounded(["show", "--path", "/workspace", path], { timeoutMs: 240_000, maxOldSpaceMiB: 24 }));
    const [few, many] = runs;
    if (few === undefined || many === undefined) throw new Error("two runs");
    for (const run of runs) expect(run.status, run.stderr).toBe(0);
    expect(few.stdout.endsWith("\n9999 of 9999 calls named path /workspace\n")).toBe(true);
    expect(many.stdout.endsWith("\n59999 of 59999 calls named path /workspace\n")).toBe(true);
    // Outside the old space (buffers, the verification's threads), holding the 50,000 more calls
    // would cost more than this; the margin is the peak's spread between runs of one record
    // on Node 24, whose peaks vary more than Node 20's, the threads keeping a bounded budget of
    // rows in flight (ADR 0027).
    expect(many.peakMiB - few.peakMiB, `peak ${few.peakMiB.toFixed(0)} MiB, then ${many.peakMiB.toFixed(0)} MiB`).toBeLessThan(48);
  });
});
