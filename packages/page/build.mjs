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
 * Issue 31: the page's row reader takes each row's LineHash from its workers where they have
 * it (src/line-hash.ts, adr/0028). Only `wire/row-read.js`'s import of `./digest.js` is
 * redirected; the build fails if that import is not where it was, rather than quietly hash
 * every row on the main thread.
 */
let swapped = 0;
const hashesAhead = {
  name: "aegis-line-hash-ahead",
  setup(build) {
    build.onResolve({ filter: /^\.\/digest\.js$/ }, (args) => {
      if (!/[\\/]format[\\/]dist[\\/]wire[\\/]row-read\.js$/.test(args.importer)) return undefined;
      swapped++;
      return { path: join(page, "src/line-hash.ts") };
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

await build({ ...common, plugins: [hashesAhead], entryPoints: [join(page, "src/main.ts")], outfile: join(out, "page.js") });
if (swapped !== 1) throw new Error(`@aegis/format's wire/row-read.js imported ./digest.js ${swapped} times, not once: src/line-hash.ts is not in its place`);
await build({ ...common, entryPoints: [join(page, "src/worker.ts")], outfile: join(out, "worker.js") });
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
