// Bundles the page of `aegis report` (packages/cli/page) for the browser: its script, its
// signature worker and its style sheet, into packages/cli/dist/report/, where the command
// reads them to write a page that needs no network and no other file (ADR 0015).
import { build } from "esbuild";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const page = join(root, "packages/cli/page");
const out = join(root, "packages/cli/dist/report");
await mkdir(out, { recursive: true });

/** Everything the page verifies with is the browser entry of @aegis/format: no node: module. */
const browserFormat = {
  name: "aegis-format-browser",
  setup(build) {
    build.onResolve({ filter: /^@aegis\/format(\/internal)?$/ }, (args) =>
      build.resolve("@aegis/format/browser", { kind: args.kind, resolveDir: args.resolveDir }),
    );
  },
};

/**
 * Issue 31: the page's row reader takes each row's LineHash from its workers where they have
 * it (packages/cli/page/src/line-hash.ts, adr/0028). Only `wire/row-read.js`'s import of
 * `./digest.js` is redirected; the page's module reaches the real one as `aegis-format-digest`.
 */
const hashesAhead = {
  name: "aegis-line-hash-ahead",
  setup(build) {
    build.onResolve({ filter: /^\.\/digest\.js$/ }, (args) =>
      /[\\/]format[\\/]dist[\\/]wire[\\/]row-read\.js$/.test(args.importer) ? { path: join(page, "src/line-hash.ts") } : undefined,
    );
    build.onResolve({ filter: /^aegis-format-digest$/ }, () => ({ path: join(root, "packages/format/dist/wire/digest.js") }));
  },
};

const common = {
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["chrome120", "firefox121", "safari17"],
  plugins: [browserFormat],
  // Not the page's tsconfig.json: its paths point the type checker at @aegis/format's sources,
  // where package.json's browser map (dist files) would not apply.
  tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  inject: [join(page, "buffer-global.js")],
  // Readable: a stranger may read what verifies their record.
  minify: false,
  legalComments: "inline",
  logLevel: "warning",
  write: true,
};

await build({ ...common, plugins: [browserFormat, hashesAhead], entryPoints: [join(page, "src/main.ts")], outfile: join(out, "page.js") });
await build({ ...common, entryPoints: [join(page, "src/worker.ts")], outfile: join(out, "worker.js") });
await copyFile(join(page, "style.css"), join(out, "style.css"));

for (const name of ["page.js", "worker.js", "style.css"]) {
  const text = await readFile(join(out, name), "utf8");
  // The command inlines these in a script or style element, which this would end early.
  if (/<\/(script|style)/i.test(text)) throw new Error(`${name} holds an end tag the page cannot carry inline`);
  if (/\bfrom\s*["']node:|require\(["']node:/.test(text)) throw new Error(`${name} imports a node: module`);
}
