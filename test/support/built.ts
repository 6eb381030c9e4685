import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ONE_FILE = "packages/cli/dist/aegis.mjs";

/**
 * Vitest's global setup: the CLI the tests start is the one file `npm run build` bundles
 * from the compiled packages (ADR 0045). Compiled again without it (`npx tsc -b`), the
 * packages would be tested in process and the CLI as it was before: stop the run instead.
 */
export default function setup(): void {
  const bundled = statSync(join(ROOT, ONE_FILE), { throwIfNoEntry: false })?.mtimeMs;
  if (bundled === undefined) throw new Error(`${ONE_FILE} is missing: run \`npm run build\` first`);
  const compiled = [...readdirSync(join(ROOT, "packages")).map((name) => `packages/${name}/dist`), "vectors/dist"];
  for (const dir of compiled.filter((d) => existsSync(join(ROOT, d)))) {
    const newer = newerThan(join(ROOT, dir), bundled);
    if (newer !== undefined) throw new Error(`${newer.slice(ROOT.length)} is newer than ${ONE_FILE}, which the CLI runs: run \`npm run build\` first`);
  }
}

/** The first compiled file under `dir` written after `time`. */
function newerThan(dir: string, time: number): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(?:js|css)$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    if (statSync(path).mtimeMs > time) return path;
  }
  return undefined;
}
