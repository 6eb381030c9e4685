// Bundles the page of `aegis report` for the browser: its script, its signature worker and its
// style sheet, into the CLI's dist/report/, where the command reads them to write a page that
// needs no network and no other file (ADR 0015), and from where the published CLI carries them.
// The page is a package of its own (adr/0031): it imports the browser entries of
// @aegis/format and @aegis/cli by name, and nothing of Node, not even a Buffer polyfill.
import { build } from "esbuild";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const page = dirname(fileURLToPath(import.meta.url));
// The CLI by its package name, as the page's imports find it.
const cli = dirname(createRequire(import.meta.url).resolve("@aegis/cli/package.json"));
const out = join(cli, "dist/report");
await mkdir(out, { recursive: true });

/**
 * In the worker, `wire/row-read.js` decodes a row as a slice of its piece's text where the
 * piece is all ASCII (src/piece-text.ts): one decode a piece, not one a row. Only that
 * module's import of `./text.js` is redirected; a build where it is not where it was fails.
 */
let sliced = 0;
const pieceText = {
  name: "aegis-piece-text",
  setup(build) {
    build.onResolve({ filter: /^\.\/text\.js$/ }, (args) => {
      if (!/[\\/]format[\\/]dist[\\/]wire[\\/]row-read\.js$/.test(args.importer)) return undefined;
      sliced++;
      return { path: join(page, "src/piece-text.ts") };
    });
  },
};

const common = {
  // The bundle's comments name each module by its path from the repository's root, wherever
  // the build is run from (`npm run build`, or this package's own): the same bytes every time.
  absWorkingDir: join(page, "../.."),
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["chrome120", "firefox121", "safari17"],
  // esbuild reads only this of a tsconfig; the page's tsconfig.json is the type checker's.
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  // Readable: a stranger may read what verifies their record.
  minify: false,
  legalComments: "inline",
  logLevel: "warning",
  write: true,
};

await build({ ...common, entryPoints: [join(page, "src/main.ts")], outfile: join(out, "page.js") });
await build({ ...common, plugins: [pieceText], entryPoints: [join(page, "src/worker.ts")], outfile: join(out, "worker.js") });
if (sliced !== 1)
  throw new Error(`@aegis/format's wire/row-read.js imported ./text.js ${sliced} times in the worker, not once: src/piece-text.ts is not in its place`);
await copyFile(join(page, "style.css"), join(out, "style.css"));

for (const name of ["page.js", "worker.js", "style.css"]) {
  const text = await readFile(join(out, name), "utf8");
  // The command inlines these in a script or style element, which this would end early.
  if (/<\/(script|style)/i.test(text)) throw new Error(`${name} holds an end tag the page cannot carry inline`);
  if (/\bfrom\s*["']node:|require\(["']node:/.test(text)) throw new Error(`${name} imports a node: module`);
  // Nothing stands in for Node's globals in a browser: code that names one would fail there.
  const global = /(?<![\w$.])(Buffer\b|process\.|require\(|global\.)/.exec(text);
  if (global !== null) throw new Error(`${name} names Node's ${global[1]}, which a browser does not have`);
}
