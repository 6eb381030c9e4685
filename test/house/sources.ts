import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every TypeScript source file of the packages and the vectors, tests left out. */
export function sources(): string[] {
  const roots = [...readdirSync(join(ROOT, "packages")).map((name) => join(ROOT, "packages", name, "src")), join(ROOT, "vectors/src")];
  return roots.flatMap((dir) => walk(dir)).filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
}

function walk(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]));
}
