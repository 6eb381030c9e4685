import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The reference's recheck fixtures, as copied into this repository (vectors/external). */
const RECHECK_DIR = fileURLToPath(new URL("../../../../vectors/external/rust-aegis/recheck/", import.meta.url));

export function fixturePath(name: string): string {
  return `${RECHECK_DIR}${name}`;
}

export function fixtureText(name: string): string {
  return readFileSync(fixturePath(name), "utf8");
}
