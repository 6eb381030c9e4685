import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_SCRIPT } from "../../../test/packaging/commands.js";
import { freePort } from "../../mcp/test/http-support.js";
import { GOLDEN, GOLDEN_KEY_ID, GOLDEN_PUBLIC_KEY, ROOT, largeRecord, tempDir } from "./support.js";

/**
 * The one-file build (ADR 0023): `npm run bundle` runs `npm run build` and then exactly
 * the script below (test/packaging/commands.ts, which the release workflow is held to),
 * which writes dist/aegis.mjs. Here it writes two copies, which must be
 * the same bytes, and one is used alone, in a folder with nothing else, as a stranger would.
 */

const BUNDLE = join(ROOT, BUNDLE_SCRIPT);
const MODULE_LOG = join(ROOT, "packages/cli/test/support/module-log.mjs");

let work = "";
let alone = "";
let bundle = "";
let printed = "";

function run(args: readonly string[], cwd = alone, env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [...args], { cwd, encoding: "utf8", env: { ...process.env, AEGIS_DEBUG: "", ...env }, maxBuffer: 1 << 26 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  work = tempDir();
  alone = join(work, "alone");
  mkdirSync(alone);
  const built = run([BUNDLE, join(work, "first/aegis.mjs")], ROOT);
  expect(built.status, built.stderr).toBe(0);
  printed = built.stdout;
  const again = run([BUNDLE, join(work, "second/aegis.mjs")], ROOT);
  expect(again.status, again.stderr).toBe(0);
  bundle = join(alone, "aegis.mjs");
  copyFileSync(join(work, "second/aegis.mjs"), bundle);
}, 120_000);

describe("dist/aegis.mjs", () => {
  it("is the same bytes when built again, and the build prints their SHA-256", () => {
    const first = readFileSync(join(work, "first/aegis.mjs"));
    const second = readFileSync(join(work, "second/aegis.mjs"));
    expect(first.equals(second)).toBe(true);
    const sha256 = createHash("sha256").update(first).digest("hex");
    expect(printed).toMatch(new RegExp(`^${sha256}  \\S*first/aegis\\.mjs\\n$`));
  });

  it("is what the bin runs: npm run build bundled the same bytes into packages/cli/dist (ADR 0045)", () => {
    const built = readFileSync(join(ROOT, "packages/cli/dist/aegis.mjs"));
    expect(built.equals(readFileSync(join(work, "first/aegis.mjs")))).toBe(true);
  });

  it("copied alone into an empty folder, verifies the reference's golden record pinned", () => {
    const golden = join(alone, "golden.aarl");
    copyFileSync(GOLDEN, golden);
    const verify = run([bundle, "verify", "--key", GOLDEN_PUBLIC_KEY, "golden.aarl"]);
    expect(verify.status, verify.stderr).toBe(0);
    expect(verify.stdout.split("\n")[0]).toBe(`Verified (pinned to ${GOLDEN_KEY_ID})`);
  });

  it("verifies a record of 16 MiB with --threads 2 on threads it starts from itself, and finds a bad signature there", async () => {
    const path = join(work, "large.aarl");
    await largeRecord(path, 40_000);
    expect(statSync(path).size).toBeGreaterThanOrEqual(16 << 20);
    const verified = run([bundle, "verify", "--threads", "2", "--key", largeRecordPublicKey(path), path]);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^Verified \(pinned to [0-9a-f]{64}\)$/m);

    // One signature changed in the middle: only the threads check it.
    const rows = readFileSync(path, "utf8").split("\n");
    const at = rows.findIndex((row, i) => i > 20_000 && row.includes('"line_type":"outcome"'));
    rows[at] = (rows[at] ?? "").replace(/"signature":"(.)/, (_w, c: string) => `"signature":"${c === "0" ? "1" : "0"}`);
    const broken = join(work, "broken.aarl");
    writeFileSync(broken, rows.join("\n"));
    const tampered = run([bundle, "verify", "--threads", "2", "--json", broken]);
    expect(tampered.status, tampered.stderr).toBe(1);
    const reason = (JSON.parse(tampered.stdout) as { reason: unknown }).reason;
    expect(reason).toMatchObject({ code: "bad_signature", at: { session_index: 0, seq: at } });
  }, 180_000);

  it("runs where code generation from strings is disallowed, on its threads too (issue 51)", async () => {
    const path = join(work, "no-eval.aarl");
    await largeRecord(path, 40_000);
    const flag = "--disallow-code-generation-from-strings";
    const verified = run([flag, bundle, "verify", "--threads", "2", "--key", largeRecordPublicKey(path), path]);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^Verified \(pinned to [0-9a-f]{64}\)$/m);
    // The flag is real: the same Node refuses eval under it.
    expect(run([flag, "-e", "eval('1')"]).stderr).toContain("Code generation from strings disallowed");
  }, 180_000);

  it("verifies several records at once, one per thread it starts from itself", () => {
    const copies = ["a", "b", "c"].map((name) => {
      const path = join(alone, `${name}.aarl`);
      copyFileSync(GOLDEN, path);
      return path;
    });
    const many = run([bundle, "verify", "--threads", "2", "--key", GOLDEN_PUBLIC_KEY, ...copies]);
    expect(many.status, many.stderr).toBe(0);
    expect(many.stdout.match(/Verified \(pinned to /g)).toHaveLength(3);
  });

  it("at its start loads no file but itself, and imports no built-in module but node:module", () => {
    const log = join(work, "modules.log");
    const version = run(["--import", MODULE_LOG, bundle, "--version"], alone, { AEGIS_MODULE_LOG: log });
    expect(version.status, version.stderr).toBe(0);
    const files = [...new Set(readFileSync(log, "utf8").split("\n").filter(Boolean))].map((url) => fileURLToPath(url));
    expect(files).toEqual([bundle]);
    // Every other built-in is required where it is first used, not imported at the top.
    const text = readFileSync(bundle, "utf8");
    expect([...text.matchAll(/\bimport\s*\{[^}]*\}\s*from\s*"([^"]+)"/g)].map((m) => m[1])).toEqual(["node:module"]);
  });

  it("records, verifies and rechecks with its Envelope (the demo), with no native addon beside it", () => {
    expect(readFileSync(bundle, "utf8")).not.toContain("cbor-extract");
    const demo = run([bundle, "demo", "--out", "demo"]);
    expect(demo.status, demo.stderr).toBe(0);
    expect(demo.stdout).toContain("Verified (pinned to");
    const envelope = run([bundle, "envelope", "verify", "--envelope", "demo/session.envelope", "demo/session.aarl"]);
    expect(envelope.status, envelope.stdout + envelope.stderr).toBe(0);
  }, 120_000);

  it("exports a record's calls as OpenTelemetry spans, the OpenTelemetry packages inside it", () => {
    // A record an aegis-ts writer wrote: spans need each Line's time, which the reference's lack.
    const exported = run([bundle, "export", "--format", "otlp-json", join(ROOT, "vectors/chains/verified_time_member.aarl")]);
    expect(exported.status, exported.stderr).toBe(0);
    const requests = exported.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { resourceSpans: { scopeSpans: { scope: { name: string; version: string }; spans: { name: string }[] }[] }[] });
    const scopes = requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans));
    const mcp = JSON.parse(readFileSync(join(ROOT, "packages/mcp/package.json"), "utf8")) as { version: string };
    expect(scopes.map((s) => s.scope)).toContainEqual({ name: "aegis", version: mcp.version });
    expect(scopes.flatMap((s) => s.spans.map((span) => span.name)).some((name) => name.startsWith("execute_tool "))).toBe(true);
  });

  it("delivers the spans over OTLP/HTTP to a real receiver, Node's http inside it", async () => {
    const received: { url: string; type: string; bytes: number }[] = [];
    const receiver = createServer((req, res) => {
      let bytes = 0;
      req.on("data", (chunk: Buffer) => (bytes += chunk.length));
      req.on("end", () => {
        received.push({ url: req.url ?? "", type: req.headers["content-type"] ?? "", bytes });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const address = receiver.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      const child = spawn(process.execPath, [bundle, "export", "--format", "otlp", join(ROOT, "vectors/chains/verified_time_member.aarl")], {
        cwd: alone,
        env: { ...process.env, AEGIS_DEBUG: "", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
      });
      let err = "";
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code, err).toBe(0);
      expect(received.length).toBeGreaterThan(0);
      expect(received[0]).toMatchObject({ url: "/v1/traces", type: "application/x-protobuf" });
      expect(received[0]?.bytes).toBeGreaterThan(100);
    } finally {
      receiver.close();
    }
  }, 60_000);

  it("relays calls to a Streamable HTTP server with --url, over its own HTTP client, and records them", async () => {
    const server = spawn(process.execPath, [join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"], {
      env: { ...process.env, PORT: String(await freePort()) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        let said = "";
        server.stderr.on("data", (chunk: Buffer) => {
          said += chunk.toString();
          const m = /listening on port (\d+)/.exec(said);
          if (m?.[1] !== undefined) resolve(m[1]);
        });
        server.once("exit", () => reject(new Error(`server-everything exited: ${said}`)));
      });
      expect(run([bundle, "keygen", "--out", "wrap.key"]).status).toBe(0);
      const frames = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "one-file", version: "1" } },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get-sum", arguments: { a: 20, b: 22 } } },
      ];
      const wrap = spawn(process.execPath, [bundle, "wrap", "--audit", "wrap.aarl", "--signing-key", "wrap.key", "--url", `http://127.0.0.1:${port}/mcp`], {
        cwd: alone,
        env: { ...process.env, AEGIS_DEBUG: "" },
      });
      let out = "";
      let err = "";
      wrap.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const answered = new Promise<void>((resolve) =>
        wrap.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('"id":2')) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => wrap.once("exit", resolve));
      wrap.stdin.write(`${frames.map((f) => JSON.stringify(f)).join("\n")}\n`);
      await Promise.race([answered, exited]);
      wrap.stdin.end();
      expect(await exited, err).toBe(0);
      expect(out).toContain("The sum of 20 and 22 is 42");
      const verified = run([bundle, "verify", "--key", readFileSync(join(alone, "wrap.pub"), "utf8").split("\n")[1] ?? "", "wrap.aarl"]);
      expect(verified.status, verified.stdout + verified.stderr).toBe(0);
    } finally {
      server.kill("SIGKILL");
    }
  }, 120_000);

  it("confines a server with one granted destination, its network helper run from inside it", async () => {
    const seen: string[] = [];
    const listener = createServer((req, res) => {
      seen.push(req.url ?? "");
      res.end("from the host");
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const address = listener.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      expect(run([bundle, "keygen", "--out", "confine.key"]).status).toBe(0);
      const reach = join(ROOT, "packages/mcp/test/fixtures/reach-server.mjs");
      const frames = [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "one-file", version: "1" } },
        },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "fetch", arguments: { url: `http://127.0.0.1:${port}/granted` } } },
      ];
      // Node's own folder too: under CI's Node 24 (from npm, in a temporary folder) it is no system path.
      const args = [
        ...["wrap", "--audit", "confine.aarl", "--signing-key", "confine.key", "--confine", "--allow-exec-support"],
        ...["--allow-read", dirname(reach), "--allow-read", dirname(process.execPath)],
      ];
      const wrap = spawn(process.execPath, [bundle, ...args, "--allow-net", `127.0.0.1:${port}`, "--", process.execPath, reach], {
        cwd: alone,
        env: { ...process.env, AEGIS_DEBUG: "" },
      });
      let out = "";
      let err = "";
      wrap.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const answered = new Promise<void>((resolve) =>
        wrap.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('"id":2')) resolve();
        }),
      );
      const exited = new Promise<number | null>((resolve) => wrap.once("exit", resolve));
      wrap.stdin.write(`${frames.map((f) => JSON.stringify(f)).join("\n")}\n`);
      await Promise.race([answered, exited]);
      wrap.stdin.end();
      expect(await exited, err).toBe(0);
      expect(out).toContain("from the host");
      expect(seen).toEqual(["/granted"]);
    } finally {
      listener.close();
    }
  }, 120_000);

  it("writes a report page that carries the page's script and style", () => {
    const report = run([bundle, "report", "--key", GOLDEN_PUBLIC_KEY, "--out", "golden.html", GOLDEN]);
    expect(report.status, report.stderr).toBe(0);
    const page = readFileSync(join(alone, "golden.html"), "utf8");
    const style = readFileSync(join(ROOT, "packages/cli/dist/report/style.css"), "utf8");
    expect(page).toContain(style.trim());
  });

  it("runs the vectors it is pointed at, and without them says they are not in it", () => {
    const vectors = run([bundle, "vectors", join(ROOT, "vectors")]);
    expect(vectors.status, vectors.stdout).toBe(0);
    expect(vectors.stdout).toMatch(/^[1-9]\d* passed, 0 failed$/m);
    const none = run([bundle, "vectors"]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^error: cannot run the vectors in @aegis\/vectors: no @aegis\/vectors package is installed beside this aegis/);
  }, 120_000);
});

function largeRecordPublicKey(path: string): string {
  const open = JSON.parse(readFileSync(path, "utf8").split("\n")[0] ?? "") as { public_key: string };
  return open.public_key;
}
