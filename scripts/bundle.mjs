// `npm run bundle`: the whole aegis CLI as one file, dist/aegis.mjs, that runs with a bare
// `node` (20.11 or later) and nothing beside it (ADR 0023). Built from the compiled packages
// (`npm run build` first), it is the same bytes on every rebuild of the same commit: its
// SHA-256 is printed, so a stranger can rebuild it and compare.
//
//   node scripts/bundle.mjs [OUT]   (default dist/aegis.mjs)
import { build, transform } from "esbuild";
import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = process.argv[2] === undefined ? join(root, "dist/aegis.mjs") : resolve(process.argv[2]);
const version = JSON.parse(await readFile(join(root, "packages/cli/package.json"), "utf8")).version;
const cliDist = join(root, "packages/cli/dist");

/**
 * What the packages read from files beside their modules, the one file carries inside it.
 * - The report page's script, worker and style (packages/cli/dist/report/, built by
 *   packages/page/build.mjs): page-assets.js is replaced by a module that holds them.
 * - Node's own modules are required where a module first uses them, not imported at the
 *   top: an ES module's imports all load before it runs, and `aegis --version` would load
 *   every built-in module any command uses (the worker threads, the network, zlib).
 * - cbor-x without its native accelerator: its Node entry loads `cbor-extract`, a compiled
 *   addon that cannot live in one file; its plain entry decodes the same bytes the same way.
 */
const oneFile = {
  name: "aegis-one-file",
  setup(b) {
    const assets = join(cliDist, "report/page-assets.js");
    b.onLoad({ filter: /[\\/]report[\\/]page-assets\.js$/ }, async (args) => {
      if (args.path !== assets) return undefined;
      const read = (name) => readFile(join(cliDist, "report", name), "utf8");
      const [script, worker, style] = await Promise.all([read("page.js"), read("worker.js"), read("style.css")]);
      const body = JSON.stringify({ script, worker, style });
      return { contents: `export async function readPageAssets() { return ${body}; }\n`, loader: "js" };
    });
    b.onResolve({ filter: /^[a-z:_/]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined;
      // A built-in imported dynamically (`const { request } = await import("http")`, the
      // OpenTelemetry exporter's) stays Node's own import: a stand-in chunk would answer it
      // with a namespace that has only a default, and no `request`.
      if (args.kind === "dynamic-import") return { path: `node:${args.path.replace(/^node:/, "")}`, external: true };
      // The require() in the stand-in below is the one the loader gives each chunk, which
      // hands a built-in to Node's own.
      if (args.namespace === "node-builtin") return { path: args.path, external: true };
      return { path: args.path.replace(/^node:/, ""), namespace: "node-builtin" };
    });
    b.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({ contents: `module.exports = require("node:${args.path}");\n`, loader: "js" }));
    const envelope = createRequire(join(root, "packages/envelope/package.json"));
    const cborPlain = join(dirname(envelope.resolve("cbor-x/package.json")), "index.js");
    b.onResolve({ filter: /^cbor-x$/ }, () => ({ path: cborPlain }));
  },
};

// Every module once, in chunks that load when first imported: esbuild's code splitting, the
// same graph the packages have, each dynamic import a chunk of its own.
const result = await build({
  absWorkingDir: root,
  entryPoints: [join(cliDist, "one-file.js")],
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20.11",
  write: false,
  metafile: true,
  outdir: join(root, "dist/chunks"),
  entryNames: "[name]",
  chunkNames: "[name]-[hash]",
  plugins: [oneFile],
  // Start-up is the scanning of this file (ADR 0023): minified, and ASCII, which Node decodes
  // and V8 scans fastest. To read it, rebuild it from the sources and compare the SHA-256.
  minify: true,
  legalComments: "none",
  charset: "ascii",
  logLevel: "warning",
});

/**
 * V8 scans every function of a script when it compiles it, however late the function runs:
 * 2 MB of code cost `aegis --version` more than Node's own start. A comment it skips at a
 * small fraction of that. So each chunk is carried as the comment inside a function, turned
 * into CommonJS whose imports of other chunks go through this file's loader; the loader takes
 * a chunk's text back with Function.prototype.toString and compiles it the first time the
 * chunk is imported. `aegis --version` compiles two small chunks; `verify` those it imports.
 */
/** A chunk's name in the loader: its file name in esbuild's (unwritten) output folder. */
const chunkName = (path) => relative(join(root, "dist/chunks"), resolve(root, path));
const chunks = [];
const cjsEntries = cjsEntryChunks(result.metafile);
for (const file of result.outputFiles) {
  const name = chunkName(file.path);
  if (name.includes("/")) throw new Error(`esbuild wrote a chunk in a folder: ${name}`);
  const cjs = await transform(file.text, {
    format: "cjs",
    target: "node20.11",
    // An import() becomes a require() through the loader, inside a promise.
    supported: { "dynamic-import": false },
    // The one file's own URL (workers start it again; its vectors are looked up beside it).
    define: { "import.meta.url": "__aegisUrl" },
    minify: true,
    charset: "ascii",
    logLevel: "warning",
  });
  if (cjs.code.includes("import.meta")) throw new Error(`${name} uses import.meta beyond its URL, which a chunk has no way to know`);
  // The comment's end, and the escape's own sign, written so that no chunk ends its comment.
  const body = cjs.code.replaceAll("%", "%25").replaceAll("*/", "*%2F");
  chunks.push(`${JSON.stringify(name)}:function(){/*${body}*/}`);
}
chunks.sort();

const header = [
  "#!/usr/bin/env node",
  `// aegis ${version}: the aegis command in one file (https://github.com/aegis-ts/aegis-ts).`,
  "// Licensed Apache-2.0 OR MIT; the licenses of the packages bundled into it are at the end.",
  "// Rebuild it from the same commit with `npm ci && npm run bundle`: the bytes are the same.",
  "// Each chunk of the program is the comment in a function below, compiled when first imported.",
  'import { createRequire as __aegisCreateRequire } from "node:module";',
  "const __aegisUrl = import.meta.url;",
  "const __aegisNodeRequire = __aegisCreateRequire(__aegisUrl);",
  "const __aegisLoaded = new Map();",
  'const __aegisVm = __aegisNodeRequire("node:vm");',
  'function __aegisRequire(id) { return id.startsWith("./") ? __aegisLoad(id.slice(2)) : __aegisNodeRequire(id); }',
  "function __aegisLoad(name) {",
  "  let module = __aegisLoaded.get(name);",
  "  if (module !== undefined) return module.exports;",
  "  const chunk = __aegisChunks[name];",
  "  if (chunk === undefined) throw new Error(`aegis.mjs holds no chunk ${name}`);",
  "  const text = String(chunk);",
  '  const body = text.slice(text.indexOf("/*") + 2, text.lastIndexOf("*/")).replaceAll("*%2F", "*/").replaceAll("%25", "%");',
  "  module = { exports: {} };",
  "  __aegisLoaded.set(name, module);",
  // node:vm, not new Function: it still runs under --disallow-code-generation-from-strings,
  // and a stack trace names the chunk.
  '  __aegisVm.compileFunction(`"use strict";${body}`, ["require", "module", "exports", "__aegisUrl"], { filename: `${__aegisUrl}#${name}` })(__aegisRequire, module, module.exports, __aegisUrl);',
  "  return __aegisCjsEntries.has(name) ? module.exports.default : module.exports;",
  "}",
  `const __aegisCjsEntries = new Set(${JSON.stringify(cjsEntries)});`,
  "const __aegisChunks = {",
].join("\n");
const program = `${header}\n${chunks.join(",\n")}\n};\n__aegisLoad("one-file.js");\n`;
const text = `${program}${await licenses(Object.keys(result.metafile.inputs))}`;
if (text.includes(root)) throw new Error("the bundle names this checkout's path: it would differ from another checkout's");
if (!/^[\x00-\x7f]*$/.test(text)) throw new Error("the bundle holds a character that is not ASCII");

await mkdir(dirname(out), { recursive: true });
await writeFile(out, text);
await chmod(out, 0o755);
const sha256 = createHash("sha256").update(text).digest("hex");
process.stdout.write(`${sha256}  ${relative(process.cwd(), out)}\n`);

/**
 * The chunks that are a CommonJS package imported by import(): esbuild's chunk exports the
 * package's `module.exports` as its default, where Node's import() would answer its named
 * exports; the loader answers that default, which the importer's interop then reads as Node
 * would. Such a chunk imported any other way would be read wrong: the build stops.
 */
function cjsEntryChunks(metafile) {
  const names = [];
  for (const [path, output] of Object.entries(metafile.outputs)) {
    if (output.entryPoint === undefined || metafile.inputs[output.entryPoint]?.format !== "cjs") continue;
    if (output.exports.join() !== "default") throw new Error(`${path}: a CommonJS entry chunk should export its default alone`);
    names.push(chunkName(path));
  }
  for (const [path, output] of Object.entries(metafile.outputs)) {
    for (const i of output.imports) {
      const target = chunkName(i.path);
      if (names.includes(target) && i.kind !== "dynamic-import") throw new Error(`${path} imports ${target}, a CommonJS entry chunk, by ${i.kind}`);
    }
  }
  return names.sort();
}

/** The license of every third-party package bundled, as one comment, in the order of their names. */
async function licenses(inputs) {
  const roots = new Set();
  for (const input of inputs) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m !== null && m[1] !== undefined && !/node_modules\/@aegis\//.test(m[1])) roots.add(m[1]);
  }
  const parts = [];
  for (const dir of [...roots].sort((a, b) => packageName(a).localeCompare(packageName(b)))) {
    const manifest = JSON.parse(await readFile(join(root, dir, "package.json"), "utf8"));
    let notice = "";
    for (const name of ["LICENSE", "LICENSE.md", "LICENSE.txt", "license", "LICENCE"]) {
      notice = await readFile(join(root, dir, name), "utf8").catch(() => "");
      if (notice !== "") break;
    }
    if (manifest.license === undefined) throw new Error(`${manifest.name} declares no license`);
    // clipanion ships no license file; say where its terms are instead of inventing a text.
    if (notice === "") notice = `The package ships no license file; its package.json declares ${manifest.license}. Source: ${repositoryOf(manifest)}`;
    parts.push(`${manifest.name}@${manifest.version} (${manifest.license})\n\n${notice.trim()}`);
  }
  const body = parts
    .join("\n\n---\n\n")
    .replaceAll("*/", "* /")
    .replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
  return `\n/*\nBundled third-party packages and their licenses\n\n${body}\n*/\n`;
}

function repositoryOf(manifest) {
  const repository = typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
  return repository ?? `https://www.npmjs.com/package/${manifest.name}`;
}

function packageName(dir) {
  return dir.replace(/^.*node_modules\//, "");
}
