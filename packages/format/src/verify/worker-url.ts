/** A compiled worker beside this module; tests run the modules from their TypeScript sources, the workers from dist/. */
export function workerUrl(file: string): URL {
  const here = new URL(file, import.meta.url);
  return import.meta.url.endsWith(".ts") ? new URL(here.href.replace("/src/verify/", "/dist/verify/")) : here;
}
