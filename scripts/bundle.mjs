// `npm run bundle`: the whole aegis CLI as one file, dist/aegis.mjs, that runs with a bare
// `node` (20.11 or later) and nothing beside it (ADR 0023). Built from the compiled packages
// (`npm run build` first), it is the same bytes on every rebuild of the same commit: its
// SHA-256 is printed, so a stranger can rebuild it and compare.
//
//   node scripts/bundle.mjs [OUT]   (default dist/aegis.mjs)
import { build } from "esbuild";
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
 *   scripts/build-page.mjs): page-assets.js is replaced by a module that holds them.
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
      // The require() in the stand-in below is Node's own (the banner's), left as it is.
      if (args.namespace === "node-builtin") return { path: args.path, external: true };
      return { path: args.path.replace(/^node:/, ""), namespace: "node-builtin" };
    });
    b.onLoad({ filter: /.*/, namespace: "node-builtin" }, (args) => ({ contents: `module.exports = require("node:${args.path}");\n`, loader: "js" }));
    const envelope = createRequire(join(root, "packages/envelope/package.json"));
    const cborPlain = join(dirname(envelope.resolve("cbor-x/package.json")), "index.js");
    b.onResolve({ filter: /^cbor-x$/ }, () => ({ path: cborPlain }));
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints: [join(cliDist, "one-file.js")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20.11",
  write: false,
  metafile: true,
  outfile: out,
  plugins: [oneFile],
  // clipanion is CommonJS and requires node: modules, which an ES module must be given a
  // require for.
  banner: {
    js: [
      "#!/usr/bin/env node",
      `// aegis ${version}: the aegis command in one file (https://github.com/aegis-ts/aegis-ts).`,
      "// Licensed Apache-2.0 OR MIT; the licenses of the packages bundled into it are at the end.",
      "// Rebuild it from the same commit with `npm ci && npm run bundle`: the bytes are the same.",
      'import { createRequire as __aegisCreateRequire } from "node:module";',
      "const require = __aegisCreateRequire(import.meta.url);",
    ].join("\n"),
  },
  // Start-up is the parsing of this file (ADR 0023): minified, and ASCII, which Node decodes
  // and V8 scans fastest. To read it, rebuild it from the sources and compare the SHA-256.
  minify: true,
  legalComments: "none",
  charset: "ascii",
  logLevel: "warning",
});

const [file] = result.outputFiles;
if (file === undefined) throw new Error("esbuild wrote no file");
const text = `${file.text}${await licenses(Object.keys(result.metafile.inputs))}`;
if (text.includes(root)) throw new Error("the bundle names this checkout's path: it would differ from another checkout's");
if (!/^[\x00-\x7f]*$/.test(text)) throw new Error("the bundle holds a character that is not ASCII");

await mkdir(dirname(out), { recursive: true });
await writeFile(out, text);
await chmod(out, 0o755);
const sha256 = createHash("sha256").update(text).digest("hex");
process.stdout.write(`${sha256}  ${relative(process.cwd(), out)}\n`);

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
