import { readFile } from "node:fs/promises";

/** The page's parts as `npm run build` bundles them (packages/page/build.mjs), beside this file. */
export interface PageAssets {
  readonly script: string;
  readonly worker: string;
  readonly style: string;
}

/**
 * Read the page's parts from beside this module. The one-file build (scripts/bundle.mjs)
 * replaces this module with one that holds them, since nothing lies beside that file.
 */
export async function readPageAssets(): Promise<PageAssets> {
  const at = (name: string): URL => new URL(name, import.meta.url);
  const [script, worker, style] = await Promise.all(["page.js", "worker.js", "style.css"].map((name) => readFile(at(name), "utf8")));
  if (script === undefined || worker === undefined || style === undefined) throw new Error("the page's assets could not be read");
  return { script, worker, style };
}
